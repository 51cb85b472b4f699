"""The computer at the root of a few-piece ending plays from the endgame tables: it carries a
won ending out to the end of the game against the longest defence and keeps a drawn one
drawn; a lost one is the search's, which knows repetitions.  The wins are checked by the
rules' own end of the game, not by the tables."""

from __future__ import annotations

import pytest

from goti.ai.endgame_moves import TableVerdict, table_choice
from goti.ai.endgames import Outcome, shipped_tables
from goti.ai.player import choose_move
from goti.rules.color import Color
from goti.rules.game import Game
from goti.rules.position import Position

BUDGET = 0.05
"""CPU seconds a move: the tables, not the search, must decide these positions."""


def _defence(position: Position) -> int:
    """The move the tables say holds out longest (or keeps the draw), for the defender."""
    choice = table_choice(position)
    assert choice is not None
    return choice.moves[0]


@pytest.mark.parametrize(
    ("variant", "fen"),
    [
        # Two kings against one, the lone king in the centre, far from a double corner.
        ("english", "W:WK29,K32:BK14"),
        # A man and a king against a king: the man must crown or the king win it alone.
        ("english", "W:W21,K32:BK10"),
        # Russian: three kings against one with the main road a1-h8 held by White.
        ("russian", "W:WKa1,Kc1,Ke1:BKb8"),
    ],
)
def test_hard_wins_a_won_ending_to_the_end_against_the_longest_defence(
    variant: str, fen: str
) -> None:
    start = Position.from_fen(fen, variant)
    found = shipped_tables(variant).lookup(start)
    assert found is not None and found.outcome is Outcome.WIN, "not a won ending"
    game = Game(variant, start=start)
    plies = 0
    while not game.is_over and plies < 300:
        if game.position.turn is Color.WHITE:
            chosen = choose_move(game.state(), "hard", time_budget=BUDGET)
            assert table_choice(game.position) is not None
            game.play(chosen.move.path)
        else:
            game.play(list(game.position.legal_moves)[_defence(game.position)].path)
        plies += 1
    assert game.outcome is not None and game.outcome.winner is Color.WHITE, game.moves
    # Each conversion is a capture or a crowning: at most one per piece on the board, each
    # within its table's count of plies, so the game cannot wander.
    assert plies < 200


def test_a_drawn_ending_is_kept_drawn_by_the_search_among_the_drawing_moves() -> None:
    # White's kings on 3 and 4 against Black's on 11, White to move: 3-7 lets 11 jump it
    # (11x3) and leaves a lone king against a lone king that loses; 4-8 and 3-8 keep the
    # draw, and the search must pick one of those.
    start = Position.from_fen("W:WK3,K4:BK11", "english")
    choice = table_choice(start)
    assert choice is not None and choice.verdict is TableVerdict.DRAW
    moves = list(start.legal_moves)
    assert sorted(start.notation(moves[index]) for index in choice.moves) == ["3-8", "4-8"]
    for level in ("hard", "master", "quick"):
        chosen = choose_move(Game("english", start=start).state(), level, time_budget=BUDGET)
        assert chosen.notation in ("3-8", "4-8"), level


def test_a_lost_ending_is_left_to_the_search_which_holds_out() -> None:
    # White's lone king on 1 against Black's on 2 and 3: 1-6 walks into a capture at once,
    # 1-5 holds out 21 plies more.  The tables know it; the search, which also knows the
    # game's repetitions, plays it and plays on.
    start = Position.from_fen("W:WK1:BK2,K3", "english")
    choice = table_choice(start)
    assert choice is not None and choice.verdict is TableVerdict.LOSS
    assert choice.plies == 22 and start.notation(list(start.legal_moves)[choice.moves[0]]) == "1-5"
    chosen = choose_move(Game("english", start=start).state(), "hard", time_budget=BUDGET)
    assert chosen.notation == "1-5"
    assert not chosen.proven_loss
