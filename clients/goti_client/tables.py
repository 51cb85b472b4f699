"""Tables as the SDK returns them: small frozen dataclasses over :mod:`goti.rules` types."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from goti.rules import Color, Game, GameWarning, Move, Outcome, Position, Square, Variant


class Opponent(enum.Enum):
    """Who a table's second player is."""

    HUMAN = "human"
    """A person who joins by code, link or from the lobby."""
    COMPUTER_EASY = "computer_easy"
    COMPUTER_NORMAL = "computer_normal"
    COMPUTER_HARD = "computer_hard"
    COMPUTER_MASTER = "computer_master"
    """The computer at its strongest."""
    PASS_AND_PLAY = "pass_and_play"
    """The creator holds both seats and moves for both sides on one device."""

    @property
    def is_computer(self) -> bool:
        """Whether the second player is the computer."""
        return self in (
            Opponent.COMPUTER_EASY,
            Opponent.COMPUTER_NORMAL,
            Opponent.COMPUTER_HARD,
            Opponent.COMPUTER_MASTER,
        )


class StartingPlayer(enum.Enum):
    """Who plays the colour that moves first (Black in English, White in Russian)."""

    PLAYER_1 = "player_1"
    """The table's creator."""
    PLAYER_2 = "player_2"
    """The opponent."""
    RANDOM = "random"
    """Drawn when the table is created."""


class Level(enum.Enum):
    """How strongly the computer plays."""

    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"
    MASTER = "master"
    """Hard's search with more time to think: the strongest."""


class TableStatus(enum.Enum):
    """Where a table is in its life."""

    WAITING = "waiting"
    """The second seat is open; no move can be played yet."""
    PLAYING = "playing"
    FINISHED = "finished"
    """The game is over; the table stays readable for a while, and a rematch may start."""


class Role(enum.Enum):
    """What the caller is at a table."""

    SPECTATOR = "spectator"
    WHITE = "white"
    BLACK = "black"
    BOTH = "both"
    """Pass-and-play: the caller holds both seats."""

    @property
    def colors(self) -> frozenset[Color]:
        """The sides the caller may act for."""
        if self is Role.BOTH:
            return frozenset(Color)
        if self is Role.SPECTATOR:
            return frozenset()
        return frozenset({Color(self.value)})

    def holds(self, color: Color) -> bool:
        """Whether the caller holds the seat of ``color``."""
        return color in self.colors


class MoveSource(enum.Enum):
    """Who made a move happen."""

    PLAYER = "player"
    COMPUTER = "computer"
    TIMER = "timer"
    """The player's turn timer ran out and the server played a quick move for them."""


@dataclass(frozen=True, slots=True)
class Player:
    """A player as everyone may see them."""

    player_id: str
    display_name: str


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's Glicko-2 rating in one variant, from rated games between people.

    ``str(rating)`` is how to show it beside the player's name: ``1523``, or ``1500?`` while
    it is provisional.
    """

    variant: Variant
    rating: int
    """1500 for a new player."""
    deviation: int
    """How uncertain the rating is: 350 for a new player, smaller with each rated game."""
    provisional: bool
    """Whether it is still too uncertain to rank (deviation 110 or more)."""
    games: int
    """Rated games finished in this variant."""

    def __str__(self) -> str:
        return f"{self.rating}?" if self.provisional else str(self.rating)


@dataclass(frozen=True, slots=True)
class Me:
    """The calling player, with its streaks against the computer and its ratings."""

    player: Player
    win_streak: int
    """Games won in a row against the computer; a loss or a draw resets it."""
    best_streak: int
    """The longest win streak against the computer the player ever had."""
    ratings: tuple[Rating, ...] = ()
    """One per variant the player has played rated; none before the first rated game."""

    def rating(self, variant: Variant) -> Rating | None:
        """The player's rating in ``variant``, if it has one."""
        return next((kept for kept in self.ratings if kept.variant == variant), None)


@dataclass(frozen=True, slots=True)
class Seat:
    """Who sits in one seat of a table."""

    color: Color
    player: Player | None
    """None while the seat is open."""
    computer_level: Level | None = None
    """The computer's level when the computer sits here (then ``player`` holds its name)."""
    rating: Rating | None = None
    """The player's rating in the table's variant when seated; None for the computer and in
    pass-and-play."""

    @property
    def is_open(self) -> bool:
        """Whether nobody sits here yet."""
        return self.player is None and self.computer_level is None

    @property
    def is_computer(self) -> bool:
        """Whether the computer sits here."""
        return self.computer_level is not None


@dataclass(frozen=True, slots=True)
class Turn:
    """The side to move and what it may do now."""

    side: Color
    legal_moves: tuple[Move, ...]
    """Every legal move; only captures when one is possible (capturing is compulsory)."""
    must_capture: tuple[Square, ...]
    """The squares of the pieces that can capture, one of which must; empty when none can."""
    may_offer_draw: bool
    """Whether the side to move may offer a draw now, before moving."""
    draw_offer_wait_moves: int
    """Own moves to play before the side to move may offer a draw again; 0 when not waiting."""


@dataclass(frozen=True, slots=True)
class GameView:
    """A game as players and spectators see it: everything needed to draw the table."""

    variant: Variant
    position: Position
    start: Position
    moves: tuple[str, ...]
    """Every move played, in the variant's notation, oldest first."""
    captured_by_white: int
    """Black's pieces White has captured."""
    captured_by_black: int
    """White's pieces Black has captured."""
    draw_offer: Color | None
    """The side whose draw offer is open."""
    warnings: frozenset[GameWarning]
    outcome: Outcome | None
    turn: Turn | None
    """None once the game is over."""
    quiet_plies: int
    """Plies since the last capture or man move (a draw at 80)."""
    repetitions: int
    """How many times the current position has come up with this side to move."""

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.outcome is not None

    def replay(self) -> Game:
        """The game rebuilt move by move with the rules library, for analysis or rendering."""
        game = Game(self.variant, start=self.start)
        for move in self.moves:
            game.play(move)
        return game


@dataclass(frozen=True, slots=True)
class Table:
    """A table: its settings, seats and game, as of ``seq``, and the caller's role there."""

    table_id: str
    code: str
    """The short code people type to join (``K7QX2M``)."""
    join_url: str
    variant: Variant
    opponent: Opponent
    public: bool
    """Whether it is listed in the lobby while its second seat is open."""
    turn_timer_seconds: int
    """Seconds each player has for each move; 0 for no timer."""
    white: Seat
    black: Seat
    status: TableStatus
    seq: int
    """The seq of the table's latest event: this is the table after it."""
    created_at: datetime
    game: GameView
    turn_deadline: datetime | None
    """When the side to move's timer runs out; None with no timer or no turn running."""
    rematch_offered_by: Color | None
    """The side whose player asked for a rematch."""
    rematch_table_id: str | None
    """The rematch's table, once it has started."""
    role: Role
    """What the caller is at this table."""
    rated: bool = False
    """Whether the game counts for both players' ratings (a rated seek's table)."""

    def seat(self, color: Color) -> Seat:
        """The seat of one colour."""
        return self.white if color is Color.WHITE else self.black


@dataclass(frozen=True, slots=True)
class LobbyTable:
    """An open public table as the lobby lists it."""

    table_id: str
    code: str
    """Pass it to ``join_table``."""
    variant: Variant
    turn_timer_seconds: int
    host: Player
    """The player waiting at the table."""
    open_color: Color
    """The colour the player who joins will play."""
    created_at: datetime
    host_rating: Rating | None = None
    """The host's rating in the table's variant; None while the host has none."""


@dataclass(frozen=True, slots=True)
class Record:
    """A table's game record: the game, its PDN, and who played it."""

    game: GameView
    pdn: str
    """The game as PDN (result ``*`` while unfinished)."""
    white: Seat
    black: Seat
