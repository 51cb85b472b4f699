"""The static evaluation's weights as ``bench/tune_evaluation.py`` fitted them: the same
position seen from the other colour scores the same, and material still leads."""

from __future__ import annotations

import random

import pytest

from goti.ai.evaluation import make_evaluator, weights_for
from goti.rules.game import Game
from goti.rules.squares import BIT_OF_SQUARE, SQUARE_OF_BIT
from goti.rules.variants import find_variant


def _rotated(board: int) -> int:
    """The board turned half a turn: square ``s`` goes to ``33 - s``."""
    turned = 0
    while board:
        bit = board & -board
        board ^= bit
        turned |= BIT_OF_SQUARE[33 - SQUARE_OF_BIT[bit]]
    return turned


def _positions(variant_name: str, games: int) -> list[tuple[int, int, int, bool]]:
    chance = random.Random(7)
    found = []
    for _ in range(games):
        game = Game(variant_name)
        while not game.is_over and game.ply < 120:
            position = game.position
            mine, theirs = position.sides()
            found.append((mine, theirs, position.kings, position.white_to_move))
            game.push(chance.choice(game.legal_moves))
    return found


@pytest.mark.parametrize("variant_name", ["english", "russian"])
def test_a_position_scores_the_same_for_either_colour(variant_name: str) -> None:
    evaluate = make_evaluator(find_variant(variant_name))
    positions = _positions(variant_name, 6)
    assert len(positions) > 200
    for mine, theirs, kings, white in positions:
        turned = (_rotated(mine), _rotated(theirs), _rotated(kings), not white)
        assert evaluate(*turned) == evaluate(mine, theirs, kings, white)


@pytest.mark.parametrize("variant_name", ["english", "russian"])
def test_the_fitted_weights_keep_material_first(variant_name: str) -> None:
    weights = weights_for(find_variant(variant_name))
    # The best square a man can stand on is worth less than half a man more than the worst,
    # so no shuffle of men outweighs a man taken (squares 1-4, White's crowning row, hold no
    # White man).
    table = weights.man_table
    assert weights.king > weights.man > 2 * (max(table) - min(table[4:]))
    assert min(table) >= 0
    assert weights.man_trade > 0 and weights.king_trade > 0
