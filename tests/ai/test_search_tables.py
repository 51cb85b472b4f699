"""The endgame tables at the search's leaves: a capture that leaves few enough pieces is scored
from the tables (looked up here through the tables' own API, not the search), a trade into a
won ending is preferred to any material the evaluation counts, and a root the tables cover
is still searched to the game's real end."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from goti.ai.endgames import Outcome, shipped_tables
from goti.ai.evaluation import WIN
from goti.ai.search import TABLE_WIN, WIN_BOUND, Searcher
from goti.rules.position import Position
from goti.rules.variants import find_variant


def _with_tables(position: Position) -> Searcher:
    tables = shipped_tables(position.variant)
    return Searcher(position, table_value=tables.value_sides, table_pieces=tables.max_pieces)


def _expected_from_tables(child: Position) -> int:
    """What a table-covered child is worth to the side that moved into it."""
    probe = shipped_tables(child.variant).lookup(child)
    assert probe is not None
    if probe.outcome is Outcome.LOSS:
        return TABLE_WIN - probe.plies
    if probe.outcome is Outcome.WIN:
        return probe.plies - TABLE_WIN
    return 0


def _five_piece_positions_with_a_capture(
    variant: str, count: int, where: Callable[[Position], bool] = lambda position: True
) -> list[Position]:
    """Random legal five-piece positions where the side to move must capture (and that
    satisfy ``where``)."""
    rules = find_variant(variant)
    chance = random.Random(20261203)
    found: list[Position] = []
    while len(found) < count:
        squares = chance.sample(range(1, 33), 5)
        white, black = squares[:3], squares[3:]
        kings = [square for square in squares if chance.random() < 0.4]
        fen = "{turn}:W{w}:B{b}".format(
            turn=chance.choice("WB"),
            w=",".join(("K" if s in kings else "") + str(s) for s in white),
            b=",".join(("K" if s in kings else "") + str(s) for s in black),
        )
        try:
            position = Position.from_fen(fen, rules)
        except ValueError:
            continue  # a man on its crowning row
        if (
            position.must_capture
            and all(
                (child.white | child.black).bit_count() <= 4 and child.white and child.black
                for child in (position.push(move) for move in position.legal_moves)
            )
            and where(position)
        ):
            found.append(position)
    return found


@pytest.mark.parametrize("variant", ["english", "russian"])
def test_a_capture_into_the_tables_is_scored_from_them(variant: str) -> None:
    for position in _five_piece_positions_with_a_capture(variant, 12):
        searcher = _with_tables(position)
        scores = searcher.score_all(depth=3)
        assert scores is not None
        moves = list(position.legal_moves)
        for move, score in zip(moves, scores, strict=True):
            child = position.push(move)
            drawn = shipped_tables(variant).probe(child) is Outcome.DRAW
            if drawn:
                # A draw, nudged by at most a fraction of a man.
                assert abs(score) < 100, (position.fen(), move)
            else:
                assert score == _expected_from_tables(child), (position.fen(), move)


def _drawn_with_a_capture_to_make(child: Position) -> bool:
    return bool(child.must_capture) and shipped_tables(child.variant).probe(child) is Outcome.DRAW


def test_a_drawn_ending_with_a_capture_to_make_scores_as_a_draw() -> None:
    # The evaluation reads a position with a capture pending as one with no quiet move, a
    # loss: a drawn ending reached so must still score as a draw, not as most of a loss.
    # (Russian: a flying king often has only captures to make.)
    positions = _five_piece_positions_with_a_capture(
        "russian",
        6,
        lambda position: any(
            _drawn_with_a_capture_to_make(position.push(move)) for move in position.legal_moves
        ),
    )
    for position in positions:
        scores = _with_tables(position).score_all(depth=3)
        assert scores is not None
        for move, score in zip(position.legal_moves, scores, strict=True):
            if _drawn_with_a_capture_to_make(position.push(move)):
                assert score == 0, (position.fen(), position.notation(move), score)


def test_without_the_tables_the_same_captures_are_only_evaluated() -> None:
    # The control: the same search without the tables gives scores in the evaluation's
    # range, so the scores above come from the tables and not from the search seeing the end.
    position = _five_piece_positions_with_a_capture("english", 1)[0]
    scores = Searcher(position).score_all(depth=1)
    assert scores is not None
    assert all(abs(score) < TABLE_WIN - 200 or abs(score) > WIN_BOUND for score in scores)


def test_a_root_the_tables_cover_is_searched_to_the_real_end() -> None:
    # White's man on 5 is held by Black's man on 1, and either move of White's king is taken
    # by 22: White has no move two plies from now.  The tables would call it a loss in some
    # plies; the search must still prove the end itself.
    position = Position.from_fen("W:W5,K30:B1,22", "english")
    scores = _with_tables(position).score_all(depth=2)
    assert scores is not None
    assert all(score == -(WIN - 2) for score in scores)
