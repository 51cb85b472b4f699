// Every word the page shows, in English and in Nepali. Move notation and square numbers stay
// as the checkers books write them in both languages. `{name}` fields are filled by `fill`.

import { Color, GameWarning, Termination } from "./gen/goti/api/v1/game_pb.js";
import type { Rating } from "./gen/goti/api/v1/players_pb.js";

export type Language = "en" | "ne";

/** Why a call was refused: the ErrorInfo reasons of errors.proto the page explains. */
export type Reason =
  | "INVALID_MOVE"
  | "ILLEGAL_MOVE"
  | "CAPTURE_REQUIRED"
  | "INCOMPLETE_CAPTURE"
  | "AMBIGUOUS_MOVE"
  | "NOT_YOUR_TURN"
  | "GAME_OVER"
  | "WAITING_FOR_OPPONENT"
  | "GAME_IN_PROGRESS"
  | "DRAW_OFFER_BEFORE_BOTH_MOVED"
  | "DRAW_ALREADY_OFFERED"
  | "DRAW_OFFER_PENDING"
  | "NO_DRAW_OFFER"
  | "NOTHING_TO_TAKE_BACK"
  | "TAKE_BACK_NOT_ALLOWED"
  | "TABLE_FULL"
  | "SEEK_IN_PROGRESS"
  | "ALREADY_AT_TABLE"
  | "SEEK_CANCELLED"
  | "STALE_SEQ"
  | "TOKEN_REQUIRED"
  | "INVALID_TOKEN"
  | "NOT_A_PLAYER"
  | "NOT_YOUR_SEAT"
  | "TABLE_NOT_FOUND"
  | "BACKEND_UNAVAILABLE";

export interface Words {
  readonly title: string;
  readonly playingAs: string;
  readonly connecting: string;
  readonly yourName: string;
  readonly saveName: string;
  readonly otherLanguage: string;
  readonly rules: string;
  readonly english: string;
  readonly russian: string;
  readonly playComputer: string;
  readonly level: string;
  readonly levels: readonly [string, string, string, string];
  readonly whoFirst: string;
  readonly firstMe: string;
  readonly firstComputer: string;
  readonly firstRandom: string;
  readonly play: string;
  readonly playOnline: string;
  readonly playOnlineHint: string;
  readonly ratedCaption: string;
  readonly casualGame: string;
  readonly ratedGame: string;
  readonly seeking: string;
  readonly seekersInPool: string;
  readonly ratingRange: string;
  readonly anyRating: string;
  readonly waited: string;
  readonly yourRating: string;
  readonly cancelSeek: string;
  readonly cancellingSeek: string;
  readonly seekCancelled: string;
  readonly backToGame: string;
  readonly ratings: string;
  readonly provisionalRating: string;
  readonly playFriend: string;
  readonly listInLobby: string;
  readonly turnTimer: string;
  readonly noTimer: string;
  readonly seconds: string;
  readonly minutes: string;
  readonly createTable: string;
  readonly codeOrLink: string;
  readonly join: string;
  readonly passAndPlay: string;
  readonly browseLobby: string;
  readonly watchWhich: string;
  readonly watch: string;
  readonly tableFullWatch: string;
  readonly streaks: string;
  readonly resumeQuestion: string;
  readonly resume: string;
  readonly newGame: string;
  readonly vsComputer: string;
  readonly vsPerson: string;
  readonly vsSelf: string;
  readonly white: string;
  readonly black: string;
  readonly you: string;
  readonly openSeat: string;
  readonly computerSeat: string;
  readonly captured: string;
  readonly tableHeader: string;
  readonly connected: string;
  readonly reconnecting: string;
  readonly yourMove: string;
  readonly sideToMove: string;
  readonly thinking: string;
  readonly waitingForOpponent: string;
  readonly shareCode: string;
  readonly shareLink: string;
  readonly copyLink: string;
  readonly linkCopied: string;
  readonly timeLeft: string;
  readonly mustCapture: string;
  readonly warnings: Readonly<Record<GameWarning.REPETITION | GameWarning.MOVE_LIMIT_NEAR, string>>;
  readonly youOfferedDrawMove: string;
  readonly youOfferedDrawWait: string;
  readonly drawOffered: string;
  readonly drawOfferComing: string;
  readonly drawOfferOpen: string;
  readonly drawAnswerOnYourTurn: string;
  readonly drawDeclined: string;
  readonly wins: string;
  readonly drawResult: string;
  readonly youWon: string;
  readonly youLost: string;
  readonly terminations: Readonly<Record<number, string>>;
  readonly rematchOffered: string;
  readonly youAskedRematch: string;
  readonly winStreak: string;
  readonly moves: string;
  readonly offerDraw: string;
  readonly acceptDraw: string;
  readonly declineDraw: string;
  readonly resign: string;
  readonly takeBack: string;
  readonly rematch: string;
  readonly leave: string;
  readonly boardKeys: string;
  readonly resignQuestion: string;
  readonly yes: string;
  readonly no: string;
  readonly watching: string;
  readonly lobbyTitle: string;
  readonly lobbyHost: string;
  readonly lobbyYouPlay: string;
  readonly lobbyTimer: string;
  readonly lobbyCode: string;
  readonly lobbyEmpty: string;
  readonly leaderboard: string;
  readonly leaderboardTitle: string;
  readonly leaderboardRank: string;
  readonly leaderboardPlayer: string;
  readonly leaderboardRating: string;
  readonly leaderboardEmpty: string;
  readonly ratingDeviation: string;
  readonly yourPlace: string;
  readonly provisionalOffBoard: string;
  readonly unratedOffBoard: string;
  readonly loading: string;
  readonly back: string;
  readonly board: string;
  readonly square: string;
  readonly man: string;
  readonly king: string;
  readonly refusals: Readonly<Record<Reason, string>>;
  readonly somethingWentWrong: string;
  readonly unreachable: string;
  readonly drawWait: string;
  readonly rateLimited: string;
}

const ENGLISH: Words = {
  title: "Goti · Checkers",
  playingAs: "Playing as {name}",
  connecting: "Connecting to Goti…",
  yourName: "Your name",
  saveName: "Save",
  otherLanguage: "नेपाली",
  rules: "Rules",
  english: "English draughts",
  russian: "Russian draughts",
  playComputer: "Play the computer",
  level: "Level",
  levels: ["Easy", "Normal", "Hard", "Master"],
  whoFirst: "Who moves first",
  firstMe: "You",
  firstComputer: "The computer",
  firstRandom: "Random",
  play: "Play",
  playOnline: "Play online now",
  playOnlineHint: "You are paired with a waiting player of about your strength.",
  ratedCaption: "Rating",
  casualGame: "Casual",
  ratedGame: "Rated",
  seeking: "Looking for an opponent…",
  seekersInPool: "Players waiting here: {count}",
  ratingRange: "Opponents rated {low} to {high}",
  anyRating: "Opponents of any rating",
  waited: "Waited {time}",
  yourRating: "Your rating: {rating}",
  cancelSeek: "Cancel",
  cancellingSeek: "Cancelling…",
  seekCancelled: "Search cancelled",
  backToGame: "Go back to the game",
  ratings: "Ratings: {ratings}",
  provisionalRating: "Provisional: too few rated games yet to be sure",
  playFriend: "Play a friend online",
  listInLobby: "List it in the lobby",
  turnTimer: "Turn timer",
  noTimer: "None",
  seconds: "{count} s",
  minutes: "{count} min",
  createTable: "Create a table",
  codeOrLink: "Table code or link",
  join: "Join",
  passAndPlay: "Pass and play on this device",
  browseLobby: "Browse the lobby",
  watchWhich: "Table code, link or id",
  watch: "Watch",
  tableFullWatch: "That table is full: you can watch the game instead.",
  streaks: "Against the computer: win streak {streak}, best {best}",
  resumeQuestion: "You have an unfinished game ({opponent}, {moves} moves played). Resume it?",
  resume: "Resume",
  newGame: "New game",
  vsComputer: "against the computer",
  vsPerson: "against a person",
  vsSelf: "pass and play",
  white: "White",
  black: "Black",
  you: "you",
  openSeat: "open seat",
  computerSeat: "Computer · {level}",
  captured: "captured {count}",
  tableHeader: "{variant} · table {code}",
  connected: "● connected",
  reconnecting: "○ reconnecting…",
  yourMove: "Your move",
  sideToMove: "{side} to move",
  thinking: "The computer is thinking…",
  waitingForOpponent: "Waiting for an opponent",
  shareCode: "Code: {code}",
  shareLink: "Link: {link}",
  copyLink: "Copy link",
  linkCopied: "Link copied",
  timeLeft: "{time} left",
  mustCapture: "You must capture",
  warnings: {
    [GameWarning.REPETITION]: "This position has come up twice: a third time is a draw",
    [GameWarning.MOVE_LIMIT_NEAR]: "{count} moves each until the 40-move draw",
  },
  youOfferedDrawMove: "You offered a draw. Now make your move: {side} answers on their turn",
  youOfferedDrawWait: "You offered a draw: {side} answers on this turn (moving declines it)",
  drawOffered: "{side} offers a draw: accept or decline it, or just move, which declines it",
  drawOfferComing: "{side} offers a draw: you can accept or decline it on your turn, after their move",
  drawOfferOpen: "{side} offered a draw: {other} answers on their turn",
  drawAnswerOnYourTurn: "You can answer the draw offer on your turn, after your opponent's move",
  drawDeclined: "The draw was declined",
  wins: "{side} wins: {why}",
  drawResult: "Draw: {why}",
  youWon: "You won!",
  youLost: "You lost.",
  terminations: {
    [Termination.NO_PIECES]: "no pieces left",
    [Termination.NO_MOVES]: "no move left",
    [Termination.RESIGNATION]: "resignation",
    [Termination.THREEFOLD_REPETITION]: "the same position three times",
    [Termination.MOVE_LIMIT]: "forty moves without a capture or a man move",
    [Termination.AGREEMENT]: "agreed",
  },
  rematchOffered: "{side} asks for a rematch",
  youAskedRematch: "You asked for a rematch",
  winStreak: "Win streak {streak} · best {best}",
  moves: "Moves",
  offerDraw: "Offer draw",
  acceptDraw: "Accept draw",
  declineDraw: "Decline",
  resign: "Resign",
  takeBack: "Take back (Ctrl+Z)",
  rematch: "Rematch",
  leave: "Leave",
  boardKeys: "Arrows move · Enter/Space choose · Esc cancels",
  resignQuestion: "Resign this game?",
  yes: "Yes",
  no: "No",
  watching: "Watching",
  lobbyTitle: "The lobby: open tables",
  lobbyHost: "Host",
  lobbyYouPlay: "You play",
  lobbyTimer: "Timer",
  lobbyCode: "Code",
  lobbyEmpty: "No open tables yet.",
  leaderboard: "Leaderboard",
  leaderboardTitle: "Leaderboard: the best-rated players",
  leaderboardRank: "Place",
  leaderboardPlayer: "Player",
  leaderboardRating: "Rating",
  leaderboardEmpty: "No settled ratings yet: players appear here after a few rated games.",
  ratingDeviation: "± how far the player's true strength may be from the rating",
  yourPlace: "Your place: {rank}",
  provisionalOffBoard: "Your rating ({rating}) is still provisional: you join the board once it settles.",
  unratedOffBoard: "Play rated games to earn a place here.",
  loading: "Loading…",
  back: "Back",
  board: "Board",
  square: "square {square}",
  man: "man",
  king: "king",
  refusals: {
    INVALID_MOVE: "That is not a move",
    ILLEGAL_MOVE: "That move is not legal here",
    CAPTURE_REQUIRED: "You must capture",
    INCOMPLETE_CAPTURE: "Keep jumping: the capture is not finished",
    AMBIGUOUS_MOVE: "That could be more than one move",
    NOT_YOUR_TURN: "Wait for your opponent",
    GAME_OVER: "The game is over",
    WAITING_FOR_OPPONENT: "Waiting for an opponent",
    GAME_IN_PROGRESS: "Finish the game first",
    DRAW_OFFER_BEFORE_BOTH_MOVED: "Play a move first",
    DRAW_ALREADY_OFFERED: "Offer sent: waiting for an answer",
    DRAW_OFFER_PENDING: "Your opponent offered a draw: accept or decline it",
    NO_DRAW_OFFER: "There is no draw offer to answer",
    NOTHING_TO_TAKE_BACK: "No move to take back",
    TAKE_BACK_NOT_ALLOWED: "Moves are final between people",
    TABLE_FULL: "That table is full: watch it instead",
    SEEK_IN_PROGRESS: "You are already looking for an opponent",
    ALREADY_AT_TABLE: "You have a game to finish: go back to it",
    SEEK_CANCELLED: "That search was cancelled: search again",
    STALE_SEQ: "The table moved on: look again, then play",
    TOKEN_REQUIRED: "Your player identity was not accepted",
    INVALID_TOKEN: "Your player identity was not accepted",
    NOT_A_PLAYER: "You are watching this table, not playing",
    NOT_YOUR_SEAT: "That is not your seat",
    TABLE_NOT_FOUND: "No table has that code or id: check it",
    BACKEND_UNAVAILABLE: "Goti is busy: try again in a moment",
  },
  somethingWentWrong: "Something went wrong: {message}",
  unreachable: "Cannot reach the server: reconnecting",
  drawWait: "You can offer a draw again in {count} moves",
  rateLimited: "Too many tries: wait {seconds} s",
};

const NEPALI: Words = {
  title: "गोटी · चेकर्स",
  playingAs: "{name} को रूपमा खेल्दै",
  connecting: "गोटीसँग जोडिँदै…",
  yourName: "तपाईंको नाम",
  saveName: "राख्नुहोस्",
  otherLanguage: "English",
  rules: "नियम",
  english: "अङ्ग्रेजी चेकर्स",
  russian: "रुसी चेकर्स",
  playComputer: "कम्प्युटरसँग खेल्नुहोस्",
  level: "तह",
  levels: ["सजिलो", "सामान्य", "कठिन", "उस्ताद"],
  whoFirst: "पहिलो चाल कसको",
  firstMe: "तपाईं",
  firstComputer: "कम्प्युटर",
  firstRandom: "संयोगले",
  play: "खेल्नुहोस्",
  playOnline: "अहिले अनलाइन खेल्नुहोस्",
  playOnlineHint: "तपाईंजस्तै बलियो, पर्खिरहेको खेलाडीसँग जोडी मिलाइन्छ।",
  ratedCaption: "रेटिङ",
  casualGame: "रेटिङमा नगनिने",
  ratedGame: "रेटिङमा गनिने",
  seeking: "प्रतिद्वन्द्वी खोज्दै…",
  seekersInPool: "यहाँ पर्खिरहेका खेलाडी: {count}",
  ratingRange: "{low} देखि {high} सम्म रेटिङका प्रतिद्वन्द्वी",
  anyRating: "जुनसुकै रेटिङका प्रतिद्वन्द्वी",
  waited: "पर्खेको समय {time}",
  yourRating: "तपाईंको रेटिङ: {rating}",
  cancelSeek: "रद्द गर्नुहोस्",
  cancellingSeek: "रद्द गर्दै…",
  seekCancelled: "खोजी रद्द गरियो",
  backToGame: "खेलमा फर्कनुहोस्",
  ratings: "रेटिङ: {ratings}",
  provisionalRating: "अस्थायी: पक्का हुन रेटिङमा गनिएका खेल अझै कम छन्",
  playFriend: "साथीसँग अनलाइन खेल्नुहोस्",
  listInLobby: "लबीमा देखाउनुहोस्",
  turnTimer: "पालोको समय",
  noTimer: "छैन",
  seconds: "{count} सेकेन्ड",
  minutes: "{count} मिनेट",
  createTable: "टेबल बनाउनुहोस्",
  codeOrLink: "टेबल कोड वा लिङ्क",
  join: "सामेल हुनुहोस्",
  passAndPlay: "यही उपकरणमा दुई जना पालैपालो खेल्नुहोस्",
  browseLobby: "लबी हेर्नुहोस्",
  watchWhich: "टेबल कोड, लिङ्क वा आईडी",
  watch: "हेर्नुहोस्",
  tableFullWatch: "त्यो टेबल भरिएको छ: बरु खेल हेर्न सक्नुहुन्छ।",
  streaks: "कम्प्युटरविरुद्ध: लगातार जित {streak}, सबैभन्दा धेरै {best}",
  resumeQuestion: "तपाईंको एउटा खेल अधुरो छ ({opponent}, {moves} चाल खेलिएको)। जारी राख्ने?",
  resume: "जारी राख्नुहोस्",
  newGame: "नयाँ खेल",
  vsComputer: "कम्प्युटरविरुद्ध",
  vsPerson: "मानिसविरुद्ध",
  vsSelf: "पालैपालो",
  white: "सेतो",
  black: "कालो",
  you: "तपाईं",
  openSeat: "खाली सिट",
  computerSeat: "कम्प्युटर · {level}",
  captured: "{count} गोटी मारे",
  tableHeader: "{variant} · टेबल {code}",
  connected: "● जोडिएको",
  reconnecting: "○ फेरि जोडिँदै…",
  yourMove: "तपाईंको पालो",
  sideToMove: "{side}को पालो",
  thinking: "कम्प्युटर सोच्दैछ…",
  waitingForOpponent: "प्रतिद्वन्द्वीको पर्खाइमा",
  shareCode: "कोड: {code}",
  shareLink: "लिङ्क: {link}",
  copyLink: "लिङ्क कपी गर्नुहोस्",
  linkCopied: "लिङ्क कपी भयो",
  timeLeft: "{time} बाँकी",
  mustCapture: "गोटी मार्नैपर्छ",
  warnings: {
    [GameWarning.REPETITION]: "यो स्थिति दुई पटक आइसक्यो: तेस्रो पटक आए बराबरी हुन्छ",
    [GameWarning.MOVE_LIMIT_NEAR]: "४० चालको बराबरीसम्म प्रत्येकको {count} चाल बाँकी",
  },
  youOfferedDrawMove: "तपाईंले बराबरीको प्रस्ताव गर्नुभयो। अब आफ्नो चाल खेल्नुहोस्: {side}ले आफ्नो पालोमा जवाफ दिनेछ",
  youOfferedDrawWait: "तपाईंले बराबरीको प्रस्ताव गर्नुभयो: {side}ले यही पालोमा जवाफ दिनेछ (चाल खेल्नु अस्वीकार हो)",
  drawOffered: "{side}ले बराबरी प्रस्ताव गर्‍यो: स्वीकार वा अस्वीकार गर्नुहोस्, वा चाल खेल्नुहोस् (चाल खेल्नु अस्वीकार हो)",
  drawOfferComing: "{side}ले बराबरी प्रस्ताव गर्‍यो: उसको चालपछि आफ्नो पालोमा स्वीकार वा अस्वीकार गर्न सक्नुहुन्छ",
  drawOfferOpen: "{side}ले बराबरी प्रस्ताव गर्‍यो: {other}ले आफ्नो पालोमा जवाफ दिनेछ",
  drawAnswerOnYourTurn: "प्रतिद्वन्द्वीको चालपछि आफ्नो पालोमा बराबरी प्रस्तावको जवाफ दिन सकिन्छ",
  drawDeclined: "बराबरी अस्वीकार भयो",
  wins: "{side} जित्यो: {why}",
  drawResult: "बराबरी: {why}",
  youWon: "तपाईं जित्नुभयो!",
  youLost: "तपाईं हार्नुभयो।",
  terminations: {
    [Termination.NO_PIECES]: "गोटी सकिए",
    [Termination.NO_MOVES]: "चाल्ने ठाउँ छैन",
    [Termination.RESIGNATION]: "हार मानियो",
    [Termination.THREEFOLD_REPETITION]: "एउटै स्थिति तीन पटक",
    [Termination.MOVE_LIMIT]: "नमारी र गोटी नचलाई चालीस चाल",
    [Termination.AGREEMENT]: "सहमति",
  },
  rematchOffered: "{side} फेरि खेल्न चाहन्छ",
  youAskedRematch: "तपाईंले फेरि खेल्न अनुरोध गर्नुभयो",
  winStreak: "लगातार जित {streak} · सबैभन्दा धेरै {best}",
  moves: "चालहरू",
  offerDraw: "बराबरी प्रस्ताव",
  acceptDraw: "बराबरी स्वीकार",
  declineDraw: "अस्वीकार",
  resign: "हार मान्नुहोस्",
  takeBack: "चाल फिर्ता (Ctrl+Z)",
  rematch: "फेरि खेल",
  leave: "बाहिर",
  boardKeys: "तीरले सार्नुहोस् · Enter/Space ले छान्नुहोस् · Esc ले रद्द",
  resignQuestion: "यो खेलमा हार मान्ने?",
  yes: "हो",
  no: "होइन",
  watching: "हेर्दै",
  lobbyTitle: "लबी: खुला टेबलहरू",
  lobbyHost: "होस्ट",
  lobbyYouPlay: "तपाईंको रङ",
  lobbyTimer: "समय",
  lobbyCode: "कोड",
  lobbyEmpty: "अहिले कुनै खुला टेबल छैन।",
  leaderboard: "लिडरबोर्ड",
  leaderboardTitle: "लिडरबोर्ड: सबैभन्दा उच्च रेटिङका खेलाडी",
  leaderboardRank: "स्थान",
  leaderboardPlayer: "खेलाडी",
  leaderboardRating: "रेटिङ",
  leaderboardEmpty: "अझै कुनै पक्का रेटिङ छैन: केही रेटिङ खेलपछि खेलाडी यहाँ देखिन्छन्।",
  ratingDeviation: "± खेलाडीको वास्तविक क्षमता रेटिङभन्दा कति फरक हुन सक्छ",
  yourPlace: "तपाईंको स्थान: {rank}",
  provisionalOffBoard: "तपाईंको रेटिङ ({rating}) अझै अस्थायी छ: पक्का भएपछि तपाईं यहाँ देखिनुहुन्छ।",
  unratedOffBoard: "यहाँ स्थान पाउन रेटिङमा गनिने खेल खेल्नुहोस्।",
  loading: "लोड हुँदैछ…",
  back: "पछाडि",
  board: "बोर्ड",
  square: "घर {square}",
  man: "गोटी",
  king: "राजा",
  refusals: {
    INVALID_MOVE: "यो चाल होइन",
    ILLEGAL_MOVE: "यो चाल यहाँ मिल्दैन",
    CAPTURE_REQUIRED: "गोटी मार्नैपर्छ",
    INCOMPLETE_CAPTURE: "मार्न बाँकी छ: उफ्रिरहनुहोस्",
    AMBIGUOUS_MOVE: "यो एकभन्दा बढी चाल हुन सक्छ",
    NOT_YOUR_TURN: "प्रतिद्वन्द्वीलाई पर्खनुहोस्",
    GAME_OVER: "खेल सकियो",
    WAITING_FOR_OPPONENT: "प्रतिद्वन्द्वीको पर्खाइमा",
    GAME_IN_PROGRESS: "पहिले खेल सक्नुहोस्",
    DRAW_OFFER_BEFORE_BOTH_MOVED: "पहिले एउटा चाल खेल्नुहोस्",
    DRAW_ALREADY_OFFERED: "प्रस्ताव पठाइयो: जवाफको पर्खाइमा",
    DRAW_OFFER_PENDING: "प्रतिद्वन्द्वीले बराबरी प्रस्ताव गरेको छ: स्वीकार वा अस्वीकार गर्नुहोस्",
    NO_DRAW_OFFER: "जवाफ दिनुपर्ने बराबरी प्रस्ताव छैन",
    NOTHING_TO_TAKE_BACK: "फिर्ता लिने चाल छैन",
    TAKE_BACK_NOT_ALLOWED: "मानिसहरूबीच चाल फिर्ता हुँदैन",
    TABLE_FULL: "त्यो टेबल भरिएको छ: बरु हेर्नुहोस्",
    SEEK_IN_PROGRESS: "तपाईं पहिले नै प्रतिद्वन्द्वी खोज्दै हुनुहुन्छ",
    ALREADY_AT_TABLE: "तपाईंको एउटा खेल बाँकी छ: त्यहीँ फर्कनुहोस्",
    SEEK_CANCELLED: "त्यो खोजी रद्द भइसक्यो: फेरि खोज्नुहोस्",
    STALE_SEQ: "टेबलमा नयाँ चाल भयो: फेरि हेरेर खेल्नुहोस्",
    TOKEN_REQUIRED: "तपाईंको परिचय स्वीकार भएन",
    INVALID_TOKEN: "तपाईंको परिचय स्वीकार भएन",
    NOT_A_PLAYER: "तपाईं यो टेबल हेर्दै हुनुहुन्छ, खेल्दै होइन",
    NOT_YOUR_SEAT: "त्यो तपाईंको सिट होइन",
    TABLE_NOT_FOUND: "त्यो कोड वा आईडीको टेबल छैन: जाँच्नुहोस्",
    BACKEND_UNAVAILABLE: "गोटी सर्भर व्यस्त छ: केहीबेरमा फेरि प्रयास गर्नुहोस्",
  },
  somethingWentWrong: "केही गडबड भयो: {message}",
  unreachable: "सर्भरसँग जोडिन सकिएन: फेरि जोडिँदै",
  drawWait: "{count} चालपछि फेरि बराबरी प्रस्ताव गर्न सकिन्छ",
  rateLimited: "धेरै प्रयास भयो: {seconds} सेकेन्ड पर्खनुहोस्",
};

export const WORDS: Readonly<Record<Language, Words>> = { en: ENGLISH, ne: NEPALI };

/** `template` with each `{name}` replaced by `values[name]`. */
export function fill(template: string, values: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole,
  );
}

/** A rating as the page writes it: the number, with a `?` while it is provisional. */
export function ratingText(rating: Rating): string {
  return `${rating.rating}${rating.provisional ? "?" : ""}`;
}

/** A side's name. */
export function colorName(words: Words, color: Color): string {
  return color === Color.WHITE ? words.white : words.black;
}

/** The language the browser asks for first, of the two the page speaks. */
export function browserLanguage(languages: readonly string[]): Language {
  for (const language of languages) {
    const lower = language.toLowerCase();
    if (lower.startsWith("ne")) return "ne";
    if (lower.startsWith("en")) return "en";
  }
  return "en";
}
