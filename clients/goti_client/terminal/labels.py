"""Every word the terminal client shows, in English and in Nepali.

The language comes from ``--lang``, else from the locale: ``LC_ALL``, ``LC_MESSAGES`` or
``LANG`` (the first one set) starting with ``ne`` means Nepali.  Move notation and square
numbers stay as the checkers books write them in both languages.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from goti.rules import Color, GameWarning, Termination, Variant
from goti_client.errors import (
    ActionRefusedError,
    GotiError,
    RateLimitedError,
    Reason,
    UnavailableError,
)
from goti_client.tables import Level

LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


class Language(enum.Enum):
    """A language the terminal client speaks."""

    ENGLISH = "en"
    NEPALI = "ne"


def language_from_locale(environment: Mapping[str, str]) -> Language:
    """The language the locale asks for: the first of LC_ALL, LC_MESSAGES and LANG that is
    set decides (Nepali when it starts with ``ne``)."""
    for variable in LOCALE_VARIABLES:
        value = environment.get(variable, "")
        if value:
            return Language.NEPALI if value.lower().startswith("ne") else Language.ENGLISH
    return Language.ENGLISH


def failure_cause(message: str) -> str:
    """The cause that ends a gRPC failure message, in gRPC's words, for the player to read.

    gRPC nests causes, each after a colon, some in brackets; the last is the one to show.

    >>> failure_cause("errors resolving bad..name:50051: [field:hostname lookup error:"
    ...     "address lookup failed for bad..name:50051: Misformatted domain name]")
    'Misformatted domain name'
    >>> failure_cause("last error: UNKNOWN: ipv4:127.0.0.1:1: Failed to connect to remote "
    ...     "host: Connection refused")
    'Connection refused'
    """
    cause = message.rsplit(": ", 1)[-1]
    # The cut leaves the brackets closed around the last cause, not the ones it opened.
    while cause.endswith("]") and cause.count("]") > cause.count("["):
        cause = cause[:-1]
    return cause.strip() or message


@dataclass(frozen=True, slots=True)
class Labels:
    """The client's words in one language; ``{name}`` fields are filled with ``format``."""

    title: str
    playing_as: str
    connecting: str
    cannot_connect: str
    retry_hint: str
    rules: str
    english: str
    russian: str
    play_computer: str
    level: str
    levels: Mapping[Level, str]
    who_first: str
    first_me: str
    first_computer: str
    first_random: str
    play: str
    play_friend: str
    list_in_lobby: str
    turn_timer: str
    no_timer: str
    seconds: str
    minutes: str
    create_table: str
    code_or_link: str
    join: str
    pass_and_play: str
    browse_lobby: str
    watch_what: str
    watch: str
    full_table_question: str
    streaks: str
    quit_hint: str
    quit_question: str
    resume_question: str
    resume: str
    new_game: str
    vs_computer: str
    vs_person: str
    vs_self: str
    white: str
    black: str
    you: str
    open_seat: str
    computer_seat: str
    captured: str
    table_header: str
    connected: str
    reconnecting: str
    your_move: str
    side_to_move: str
    thinking: str
    waiting_for_opponent: str
    share_code: str
    share_link: str
    time_left: str
    must_capture: str
    must_capture_with: str
    piece_cannot_move: str
    warnings: Mapping[GameWarning, str]
    you_offered_draw: str
    draw_offered: str
    draw_offer_open: str
    draw_declined: str
    wins: str
    draw_result: str
    you_won: str
    you_lost: str
    terminations: Mapping[Termination, str]
    rematch_offered: str
    you_asked_rematch: str
    win_streak: str
    moves: str
    offer_draw: str
    accept_draw: str
    decline_draw: str
    resign: str
    take_back: str
    rematch: str
    leave: str
    board_keys: str
    resign_question: str
    yes: str
    no: str
    watching: str
    legend: str
    lobby_title: str
    lobby_host: str
    lobby_you_play: str
    lobby_timer: str
    lobby_code: str
    lobby_empty: str
    lobby_keys: str
    play_online: str
    rated_game: str
    find_opponent: str
    rated: str
    casual: str
    seek_title: str
    seekers_waiting: str
    rating_range: str
    any_rating: str
    waited: str
    your_rating: str
    seek_keys: str
    seek_cancelled: str
    cancelling_seek: str
    paired_with: str
    rated_name: str
    your_ratings: str
    unfinished_game_question: str
    go_back: str
    refusals: Mapping[Reason, str]
    something_went_wrong: str
    unreachable: str
    draw_wait: str
    rate_limited: str

    def color(self, color: Color) -> str:
        """A side's name."""
        return self.white if color is Color.WHITE else self.black

    def variant(self, variant: Variant) -> str:
        """A variant's name."""
        return self.russian if variant.algebraic else self.english

    def timer_length(self, seconds: int) -> str:
        """A turn timer's seconds per move as offered to choose (0: no timer)."""
        if seconds == 0:
            return self.no_timer
        if seconds < 60:
            return self.seconds.format(count=seconds)
        return self.minutes.format(count=seconds // 60)

    def explain(self, error: GotiError) -> str:
        """A failed call as one line for the player."""
        if isinstance(error, RateLimitedError):
            wait = error.retry_after
            return self.rate_limited.format(seconds=max(1, round(wait or 1)))
        if isinstance(error, ActionRefusedError) and error.moves_to_wait:
            return self.draw_wait.format(count=error.moves_to_wait)
        known = self.refusals.get(error.reason)
        if known is not None:
            return known
        if isinstance(error, UnavailableError):
            return self.unreachable
        first_line = (error.message or error.code.name).splitlines()[0]
        return self.something_went_wrong.format(message=first_line)


ENGLISH_LABELS = Labels(
    title="Goti · Checkers",
    playing_as="Playing as {name} on {server}",
    connecting="Connecting to {server}…",
    cannot_connect="Cannot reach Goti at {server}: {reason}",
    retry_hint="Press R to try again, Q to quit.",
    rules="Rules",
    english="English draughts",
    russian="Russian draughts",
    play_computer="Play the computer",
    level="Level",
    levels={
        Level.EASY: "Easy",
        Level.NORMAL: "Normal",
        Level.HARD: "Hard",
        Level.MASTER: "Master",
    },
    who_first="Who moves first",
    first_me="You",
    first_computer="The computer",
    first_random="Random",
    play="Play",
    play_friend="Play a friend online",
    list_in_lobby="List it in the lobby",
    turn_timer="Turn timer",
    no_timer="None",
    seconds="{count} s",
    minutes="{count} min",
    create_table="Create a table",
    code_or_link="Table code or link",
    join="Join",
    pass_and_play="Pass and play on this terminal",
    browse_lobby="Browse the lobby",
    watch_what="Table id, code or link",
    watch="Watch",
    full_table_question="That table is full: both seats are taken. Watch it instead?",
    streaks="Against the computer: win streak {streak}, best {best}",
    quit_hint="Tab moves between choices · Q quits",
    quit_question="Quit Goti?",
    resume_question="You have an unfinished game ({opponent}, at move {move}). Resume it?",
    resume="Resume",
    new_game="New game",
    vs_computer="against the computer",
    vs_person="against a person",
    vs_self="pass and play",
    white="White",
    black="Black",
    you="you",
    open_seat="open seat",
    computer_seat="Computer · {level}",
    captured="captured {count}",
    table_header="{variant} · table {code}",
    connected="● connected",
    reconnecting="○ reconnecting…",
    your_move="Your move",
    side_to_move="{side} to move",
    thinking="The computer is thinking…",
    waiting_for_opponent="Waiting for an opponent",
    share_code="Code: {code}",
    share_link="Link: {link}",
    time_left="{time} left",
    must_capture="You must capture",
    must_capture_with="You must capture: pick {squares}",
    piece_cannot_move="That piece has no move",
    warnings={
        GameWarning.REPETITION: "This position has come up twice: a third time is a draw",
        GameWarning.MOVE_LIMIT_NEAR: "{count} moves each until the 40-move draw",
    },
    you_offered_draw="You offered a draw",
    draw_offered="{side} offers a draw: Y accepts, N declines",
    draw_offer_open="{side} offered a draw",
    draw_declined="The draw was declined",
    wins="{side} wins: {why}",
    draw_result="Draw: {why}",
    you_won="You won! {result}",
    you_lost="You lost. {result}",
    terminations={
        Termination.NO_PIECES: "no pieces left",
        Termination.NO_MOVES: "no move left",
        Termination.RESIGNATION: "resignation",
        Termination.THREEFOLD_REPETITION: "the same position three times",
        Termination.MOVE_LIMIT: "forty moves without a capture or a man move",
        Termination.AGREEMENT: "agreed",
    },
    rematch_offered="{side} asks for a rematch: M accepts",
    you_asked_rematch="You asked for a rematch",
    win_streak="Win streak {streak} · best {best}",
    moves="Moves",
    offer_draw="Offer draw (D)",
    accept_draw="Accept draw (Y)",
    decline_draw="Decline (N)",
    resign="Resign (R)",
    take_back="Take back (Ctrl+Z)",
    rematch="Rematch (M)",
    leave="Leave (Q)",
    board_keys="Arrows move · Enter/Space choose · Esc cancels",
    resign_question="Resign this game?",
    yes="Yes",
    no="No",
    watching="Watching",
    legend="● man  ♛ king",
    lobby_title="The lobby: open tables",
    lobby_host="Host",
    lobby_you_play="You play",
    lobby_timer="Timer",
    lobby_code="Code",
    lobby_empty="No open tables yet.",
    lobby_keys="Enter joins the table · Esc goes back",
    play_online="Play online now",
    rated_game="Rated: the game changes both players' ratings",
    find_opponent="Find an opponent",
    rated="rated",
    casual="casual",
    seek_title="Looking for an opponent · {variant} · {timer} · {kind}",
    seekers_waiting="Players waiting: {count}",
    rating_range="Opponents rated {low} to {high}",
    any_rating="Opponents of any rating",
    waited="Waited {time}",
    your_rating="Your rating: {rating}",
    seek_keys="Esc cancels",
    seek_cancelled="Search cancelled",
    cancelling_seek="Cancelling…",
    paired_with="Paired with {name}",
    rated_name="{name} ({rating})",
    your_ratings="Your rating: {ratings}",
    unfinished_game_question="You have a game to finish. Go back to it?",
    go_back="Go back",
    refusals={
        Reason.INVALID_MOVE: "That is not a move",
        Reason.ILLEGAL_MOVE: "That move is not legal here",
        Reason.CAPTURE_REQUIRED: "You must capture",
        Reason.INCOMPLETE_CAPTURE: "Keep jumping: the capture is not finished",
        Reason.AMBIGUOUS_MOVE: "That could be more than one move",
        Reason.NOT_YOUR_TURN: "Wait for your opponent",
        Reason.GAME_OVER: "The game is over",
        Reason.WAITING_FOR_OPPONENT: "Waiting for an opponent",
        Reason.GAME_IN_PROGRESS: "Finish the game first",
        Reason.DRAW_OFFER_BEFORE_BOTH_MOVED: "Play a move first",
        Reason.DRAW_ALREADY_OFFERED: "Offer sent: waiting for an answer",
        Reason.DRAW_OFFER_PENDING: "Your opponent offered a draw: accept or decline it",
        Reason.NO_DRAW_OFFER: "There is no draw offer to answer",
        Reason.NOTHING_TO_TAKE_BACK: "No move to take back",
        Reason.TAKE_BACK_NOT_ALLOWED: "Moves are final between people",
        Reason.TABLE_FULL: "That table is full: watch it instead",
        Reason.SEEK_IN_PROGRESS: "You are already looking for an opponent",
        Reason.SEEK_CANCELLED: "That search was cancelled: search again",
        Reason.ALREADY_AT_TABLE: "You have a game to finish: go back to it",
        Reason.STALE_SEQ: "The table moved on: look again, then play",
        Reason.TOKEN_REQUIRED: "Your player identity was not accepted",
        Reason.INVALID_TOKEN: "Your player identity was not accepted",
        Reason.NOT_A_PLAYER: "You are watching this table, not playing",
        Reason.NOT_YOUR_SEAT: "That is not your seat",
        Reason.TABLE_NOT_FOUND: "No table has that code or id: check it",
        Reason.BACKEND_UNAVAILABLE: "Goti is busy: try again in a moment",
    },
    something_went_wrong="Something went wrong: {message}",
    unreachable="Cannot reach the server: reconnecting",
    draw_wait="You can offer a draw again in {count} moves",
    rate_limited="Too many tries: wait {seconds} s",
)

NEPALI_LABELS = Labels(
    title="गोटी · चेकर्स",
    playing_as="{server} मा {name} को रूपमा खेल्दै",
    connecting="{server} सँग जोडिँदै…",
    cannot_connect="{server} मा गोटी भेटिएन: {reason}",
    retry_hint="फेरि प्रयास गर्न R, बन्द गर्न Q थिच्नुहोस्।",
    rules="नियम",
    english="अङ्ग्रेजी चेकर्स",
    russian="रुसी चेकर्स",
    play_computer="कम्प्युटरसँग खेल्नुहोस्",
    level="तह",
    levels={
        Level.EASY: "सजिलो",
        Level.NORMAL: "सामान्य",
        Level.HARD: "कठिन",
        Level.MASTER: "उस्ताद",
    },
    who_first="पहिलो चाल कसको",
    first_me="तपाईं",
    first_computer="कम्प्युटर",
    first_random="संयोगले",
    play="खेल्नुहोस्",
    play_friend="साथीसँग अनलाइन खेल्नुहोस्",
    list_in_lobby="लबीमा देखाउनुहोस्",
    turn_timer="पालोको समय",
    no_timer="छैन",
    seconds="{count} सेकेन्ड",
    minutes="{count} मिनेट",
    create_table="टेबल बनाउनुहोस्",
    code_or_link="टेबल कोड वा लिङ्क",
    join="सामेल हुनुहोस्",
    pass_and_play="यही टर्मिनलमा दुई जना पालैपालो खेल्नुहोस्",
    browse_lobby="लबी हेर्नुहोस्",
    watch_what="टेबल आईडी, कोड वा लिङ्क",
    watch="हेर्नुहोस्",
    full_table_question="त्यो टेबल भरिएको छ: दुवै सिटमा खेलाडी छन्। बरु हेर्ने?",
    streaks="कम्प्युटरविरुद्ध: लगातार जित {streak}, सबैभन्दा धेरै {best}",
    quit_hint="Tab ले छनोट सार्छ · Q ले बन्द गर्छ",
    quit_question="गोटी बन्द गर्ने?",
    resume_question="तपाईंको एउटा खेल अधुरो छ ({opponent}, चाल नम्बर {move})। जारी राख्ने?",
    resume="जारी राख्नुहोस्",
    new_game="नयाँ खेल",
    vs_computer="कम्प्युटरविरुद्ध",
    vs_person="मानिसविरुद्ध",
    vs_self="पालैपालो",
    white="सेतो",
    black="कालो",
    you="तपाईं",
    open_seat="खाली सिट",
    computer_seat="कम्प्युटर · {level}",
    captured="{count} गोटी मारे",
    table_header="{variant} · टेबल {code}",
    connected="● जोडिएको",
    reconnecting="○ फेरि जोडिँदै…",
    your_move="तपाईंको पालो",
    side_to_move="{side}को पालो",
    thinking="कम्प्युटर सोच्दैछ…",
    waiting_for_opponent="प्रतिद्वन्द्वीको पर्खाइमा",
    share_code="कोड: {code}",
    share_link="लिङ्क: {link}",
    time_left="{time} बाँकी",
    must_capture="गोटी मार्नैपर्छ",
    must_capture_with="गोटी मार्नैपर्छ: {squares} छान्नुहोस्",
    piece_cannot_move="त्यो गोटीको चाल छैन",
    warnings={
        GameWarning.REPETITION: "यो स्थिति दुई पटक आइसक्यो: तेस्रो पटक आए बराबरी हुन्छ",
        GameWarning.MOVE_LIMIT_NEAR: "४० चालको बराबरीसम्म प्रत्येकको {count} चाल बाँकी",
    },
    you_offered_draw="तपाईंले बराबरीको प्रस्ताव गर्नुभयो",
    draw_offered="{side}ले बराबरी प्रस्ताव गर्‍यो: Y स्वीकार, N अस्वीकार",
    draw_offer_open="{side}ले बराबरी प्रस्ताव गर्‍यो",
    draw_declined="बराबरी अस्वीकार भयो",
    wins="{side} जित्यो: {why}",
    draw_result="बराबरी: {why}",
    you_won="तपाईं जित्नुभयो! {result}",
    you_lost="तपाईं हार्नुभयो। {result}",
    terminations={
        Termination.NO_PIECES: "गोटी सकिए",
        Termination.NO_MOVES: "चाल्ने ठाउँ छैन",
        Termination.RESIGNATION: "हार मानियो",
        Termination.THREEFOLD_REPETITION: "एउटै स्थिति तीन पटक",
        Termination.MOVE_LIMIT: "नमारी र गोटी नचलाई चालीस चाल",
        Termination.AGREEMENT: "सहमति",
    },
    rematch_offered="{side} फेरि खेल्न चाहन्छ: M थिच्नुहोस्",
    you_asked_rematch="तपाईंले फेरि खेल्न अनुरोध गर्नुभयो",
    win_streak="लगातार जित {streak} · सबैभन्दा धेरै {best}",
    moves="चालहरू",
    offer_draw="बराबरी प्रस्ताव (D)",
    accept_draw="बराबरी स्वीकार (Y)",
    decline_draw="अस्वीकार (N)",
    resign="हार मान्नुहोस् (R)",
    take_back="चाल फिर्ता (Ctrl+Z)",
    rematch="फेरि खेल (M)",
    leave="बाहिर (Q)",
    board_keys="तीरले सार्नुहोस् · Enter/Space ले छान्नुहोस् · Esc ले रद्द",
    resign_question="यो खेलमा हार मान्ने?",
    yes="हो",
    no="होइन",
    watching="हेर्दै",
    legend="● गोटी  ♛ राजा",
    lobby_title="लबी: खुला टेबलहरू",
    lobby_host="होस्ट",
    lobby_you_play="तपाईंको रङ",
    lobby_timer="समय",
    lobby_code="कोड",
    lobby_empty="अहिले कुनै खुला टेबल छैन।",
    lobby_keys="Enter ले टेबलमा सामेल गराउँछ · Esc ले पछाडि लैजान्छ",
    play_online="अहिले अनलाइन खेल्नुहोस्",
    rated_game="रेटिङमा गनिने: खेलले दुवै खेलाडीको रेटिङ बदल्छ",
    find_opponent="प्रतिद्वन्द्वी खोज्नुहोस्",
    rated="रेटिङमा गनिने",
    casual="रेटिङमा नगनिने",
    seek_title="प्रतिद्वन्द्वी खोज्दै · {variant} · {timer} · {kind}",
    seekers_waiting="पर्खिरहेका खेलाडी: {count}",
    rating_range="{low} देखि {high} रेटिङसम्मका प्रतिद्वन्द्वी",
    any_rating="जुनसुकै रेटिङका प्रतिद्वन्द्वी",
    waited="पर्खेको समय: {time}",
    your_rating="तपाईंको रेटिङ: {rating}",
    seek_keys="Esc ले रद्द गर्छ",
    seek_cancelled="खोजी रद्द गरियो",
    cancelling_seek="रद्द गर्दै…",
    paired_with="{name} सँग खेल मिल्यो",
    rated_name="{name} ({rating})",
    your_ratings="तपाईंको रेटिङ: {ratings}",
    unfinished_game_question="तपाईंको एउटा खेल बाँकी छ। त्यहीँ फर्कने?",
    go_back="फर्कनुहोस्",
    refusals={
        Reason.INVALID_MOVE: "यो चाल होइन",
        Reason.ILLEGAL_MOVE: "यो चाल यहाँ मिल्दैन",
        Reason.CAPTURE_REQUIRED: "गोटी मार्नैपर्छ",
        Reason.INCOMPLETE_CAPTURE: "मार्न बाँकी छ: उफ्रिरहनुहोस्",
        Reason.AMBIGUOUS_MOVE: "यो एकभन्दा बढी चाल हुन सक्छ",
        Reason.NOT_YOUR_TURN: "प्रतिद्वन्द्वीलाई पर्खनुहोस्",
        Reason.GAME_OVER: "खेल सकियो",
        Reason.WAITING_FOR_OPPONENT: "प्रतिद्वन्द्वीको पर्खाइमा",
        Reason.GAME_IN_PROGRESS: "पहिले खेल सक्नुहोस्",
        Reason.DRAW_OFFER_BEFORE_BOTH_MOVED: "पहिले एउटा चाल खेल्नुहोस्",
        Reason.DRAW_ALREADY_OFFERED: "प्रस्ताव पठाइयो: जवाफको पर्खाइमा",
        Reason.DRAW_OFFER_PENDING: "प्रतिद्वन्द्वीले बराबरी प्रस्ताव गरेको छ: स्वीकार वा अस्वीकार गर्नुहोस्",
        Reason.NO_DRAW_OFFER: "जवाफ दिनुपर्ने बराबरी प्रस्ताव छैन",
        Reason.NOTHING_TO_TAKE_BACK: "फिर्ता लिने चाल छैन",
        Reason.TAKE_BACK_NOT_ALLOWED: "मानिसहरूबीच चाल फिर्ता हुँदैन",
        Reason.TABLE_FULL: "त्यो टेबल भरिएको छ: बरु हेर्नुहोस्",
        Reason.SEEK_IN_PROGRESS: "तपाईं पहिले नै प्रतिद्वन्द्वी खोज्दै हुनुहुन्छ",
        Reason.SEEK_CANCELLED: "त्यो खोजी रद्द भइसक्यो: फेरि खोज्नुहोस्",
        Reason.ALREADY_AT_TABLE: "तपाईंको एउटा खेल बाँकी छ: त्यहीँ फर्कनुहोस्",
        Reason.STALE_SEQ: "टेबलमा नयाँ चाल भयो: फेरि हेरेर खेल्नुहोस्",
        Reason.TOKEN_REQUIRED: "तपाईंको परिचय स्वीकार भएन",
        Reason.INVALID_TOKEN: "तपाईंको परिचय स्वीकार भएन",
        Reason.NOT_A_PLAYER: "तपाईं यो टेबल हेर्दै हुनुहुन्छ, खेल्दै होइन",
        Reason.NOT_YOUR_SEAT: "त्यो तपाईंको सिट होइन",
        Reason.TABLE_NOT_FOUND: "त्यो कोड वा आईडीको टेबल छैन: जाँच्नुहोस्",
        Reason.BACKEND_UNAVAILABLE: "गोटी सर्भर व्यस्त छ: केहीबेरमा फेरि प्रयास गर्नुहोस्",
    },
    something_went_wrong="केही गडबड भयो: {message}",
    unreachable="सर्भरसँग जोडिन सकिएन: फेरि जोडिँदै",
    draw_wait="{count} चालपछि फेरि बराबरी प्रस्ताव गर्न सकिन्छ",
    rate_limited="धेरै प्रयास भयो: {seconds} सेकेन्ड पर्खनुहोस्",
)

LABELS: Mapping[Language, Labels] = {
    Language.ENGLISH: ENGLISH_LABELS,
    Language.NEPALI: NEPALI_LABELS,
}
