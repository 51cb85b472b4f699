"""PDN games: write a finished or running game, read games back.

Results are written as in PDN: ``1-0`` White won, ``0-1`` Black won, ``1/2-1/2`` drawn,
``*`` unfinished.  Reading also takes the ``2-0``, ``0-2`` and ``1-1`` match-score forms.

>>> from goti.rules.game import Game
>>> game = Game()
>>> for text in ["11-15", "23-19", "8-11", "22-17"]:
...     _ = game.play(text)
>>> print(write_pdn(game, {"Event": "Demo"}).splitlines()[-1])
1. 11-15 23-19 2. 8-11 22-17 *
>>> read_pdn(write_pdn(game))[0].game.moves == game.moves
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from goti.rules.color import Color
from goti.rules.errors import InvalidPdnError
from goti.rules.game import Game, Outcome, Termination
from goti.rules.position import Position
from goti.rules.variants import ENGLISH, Variant, find_variant

_SEVEN_TAGS: Final = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
_LINE_WIDTH: Final = 79

_TAG = re.compile(r'\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]')
_TOKEN = re.compile(
    r"""
      (?P<comment>\{[^}]*\}|;[^\n]*)
    | (?P<open>\() | (?P<close>\))
    | (?P<result>1-0|0-1|1/2-1/2|2-0|0-2|1-1|0-0|\*)(?=\s|$)
    | (?P<number>\d+\.(?:\.\.)?)
    | (?P<nag>\$\d+)
    | (?P<move>[a-h]?\d{1,2}(?:[-x:][a-h]?\d{1,2})+)[!?+#]*
    | (?P<other>\S+)
    """,
    re.VERBOSE | re.IGNORECASE,
)
_RESULTS: Final[dict[str, Color | None]] = {
    "1-0": Color.WHITE,
    "2-0": Color.WHITE,
    "0-1": Color.BLACK,
    "0-2": Color.BLACK,
    "1/2-1/2": None,
    "1-1": None,
}


@dataclass(frozen=True, slots=True)
class PdnGame:
    """A game read from PDN: its tags and the game replayed from its moves."""

    tags: dict[str, str]
    game: Game


def game_type_tag(variant: Variant) -> str:
    """The full PDN ``GameType`` value: ``21,B,8,8,N1,0`` or ``25,W,8,8,A0,0``."""
    if variant.algebraic:
        return f"{variant.pdn_game_type},{variant.first_to_move.letter},8,8,A0,0"
    return f"{variant.pdn_game_type},{variant.first_to_move.letter},8,8,N1,0"


def write_pdn(game: Game, tags: dict[str, str] | None = None) -> str:
    """The game as PDN text: the seven standard tags, GameType, FEN when set up, the moves."""
    given = dict(tags or {})
    outcome = game.outcome
    result = outcome.result if outcome is not None else "*"
    values = {name: given.pop(name, "?") for name in _SEVEN_TAGS}
    if values["Date"] == "?":
        values["Date"] = "????.??.??"
    values["Result"] = result
    values["GameType"] = game_type_tag(game.variant)
    given.pop("GameType", None)
    given.pop("FEN", None)
    given.pop("SetUp", None)
    if game.start != Position.initial(game.variant):
        values["SetUp"] = "1"
        values["FEN"] = game.start.fen()
    values.update(given)
    lines = [f'[{name} "{_escape(value)}"]' for name, value in values.items()]
    lines.append("")
    lines.extend(_wrap([*_numbered_moves(game), result]))
    return "\n".join(lines) + "\n"


def _numbered_moves(game: Game) -> list[str]:
    words: list[str] = []
    first_mover = game.variant.first_to_move
    # The move number counts pairs that begin with the variant's first mover.
    number = 1
    for ply, notation in enumerate(game.moves):
        mover = game.start.turn if ply % 2 == 0 else game.start.turn.opponent
        if mover is first_mover:
            words.append(f"{number}.")
            words.append(notation)
        else:
            if ply == 0:
                words.append(f"{number}...")
            words.append(notation)
            number += 1
    return words


def _wrap(words: list[str]) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in words:
        if current and len(current) + 1 + len(word) > _LINE_WIDTH:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def read_pdn(text: str, variant: Variant | None = None) -> list[PdnGame]:
    """Every game in a PDN text, each replayed move by move.

    The variant comes from each game's ``GameType`` tag, else ``variant``, else English.
    Raises :class:`InvalidPdnError` naming the ply and the move that is not legal, or the
    token that is not PDN.  A result that no rule explains (the loser is to move) is read
    as a resignation, a drawn result as an agreement.
    """
    games = []
    for chunk in _split_games(text):
        games.append(_read_game(chunk, variant))
    return games


def _split_games(text: str) -> list[str]:
    """Split a PDN text into games: each starts at a tag block that follows movetext."""
    chunks: list[str] = []
    current: list[str] = []
    seen_moves = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and seen_moves:
            chunks.append("\n".join(current))
            current, seen_moves = [], False
        if stripped and not stripped.startswith("["):
            seen_moves = True
        current.append(line)
    if any(line.strip() for line in current):
        chunks.append("\n".join(current))
    return chunks


def _read_game(chunk: str, default_variant: Variant | None) -> PdnGame:
    tags = {
        name: value.replace('\\"', '"').replace("\\\\", "\\") for name, value in _TAG.findall(chunk)
    }
    movetext = _TAG.sub(" ", chunk)
    variant = find_variant(tags["GameType"]) if "GameType" in tags else default_variant or ENGLISH
    if "FEN" in tags:
        try:
            game = Game.from_fen(tags["FEN"], variant)
        except ValueError as error:
            raise InvalidPdnError(f"FEN tag: {error}") from error
    else:
        game = Game(variant)
    depth = 0
    result: str | None = None
    for match in _TOKEN.finditer(movetext):
        kind = match.lastgroup
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(0, depth - 1)
        elif depth or kind in ("comment", "number", "nag"):
            continue
        elif kind == "result":
            result = match.group("result")
        elif kind == "move":
            text = match.group("move")
            try:
                game.play(text)
            except ValueError as error:
                raise InvalidPdnError(f"ply {game.ply + 1}, {text}: {error}") from error
        else:
            raise InvalidPdnError(f"unexpected {match.group(0)!r} in the PDN movetext")
    result = result or tags.get("Result")
    if result in _RESULTS and not game.is_over:
        game = _with_declared_result(game, _RESULTS[result])
    return PdnGame(tags, game)


def _with_declared_result(game: Game, winner: Color | None) -> Game:
    """A game whose PDN result has no rule behind it: a resignation or an agreed draw."""
    if winner is None:
        outcome = Outcome(Termination.AGREEMENT, None)
    elif winner is game.turn.opponent:
        outcome = Outcome(Termination.RESIGNATION, winner)
    else:
        # The side to move is said to have won without a move: no rule here gives that.
        return game
    return Game.from_state(replace(game.state(), outcome=outcome, draw_offer=None))
