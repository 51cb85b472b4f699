"""PDN games out and back in."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goti.rules.color import Color
from goti.rules.errors import InvalidPdnError
from goti.rules.game import Game, Outcome, Termination
from goti.rules.pdn import read_pdn, write_pdn

# Written by hand in the usual style of published PDN files: comments, a variation, NAGs,
# numbers glued to moves or not, and two games in one file.
TWO_GAMES = """
[Event "Club night"]
[White "Ann"]
[Black "Bob"]
[Result "0-1"]
[GameType "21"]

1. 11-15 {the Old Fourteenth starts} 23-19 2. 8-11 (2. 9-14 27-23) 22-17 $1
3.4-8 17-13 4. 15-18! 24-20 0-1

[Event "Set-up"]
[GameType "25,W,8,8,A0,0"]
[SetUp "1"]
[FEN "W:Wc3:Bd4,f6"]
[Result "1-0"]

1. c3:e5:g7 1-0
"""


def test_reads_games_written_elsewhere() -> None:
    first, second = read_pdn(TWO_GAMES)
    assert first.tags["White"] == "Ann"
    assert first.game.moves == ("11-15", "23-19", "8-11", "22-17", "4-8", "17-13", "15-18", "24-20")
    # The result names Black the winner with Black to move: read as White's resignation.
    assert first.game.outcome is None
    assert second.game.variant.name == "russian"
    assert second.game.outcome == Outcome(Termination.NO_PIECES, Color.WHITE)


def test_a_declared_result_without_a_rule_is_a_resignation_or_an_agreement() -> None:
    text = '[Result "1-0"]\n\n1. 11-15 23-19 1-0\n'
    (read,) = read_pdn(text)
    assert read.game.outcome == Outcome(Termination.RESIGNATION, Color.WHITE)
    (drawn,) = read_pdn('[Result "1/2-1/2"]\n\n1. 11-15 23-19 1/2-1/2\n')
    assert drawn.game.outcome == Outcome(Termination.AGREEMENT, None)


def test_writes_the_seven_tags_gametype_and_fen_for_a_set_up_game() -> None:
    game = Game.from_fen("W:Wc3:Bd4,f6", "russian")
    game.play("c3:e5:g7")
    text = write_pdn(game, {"White": "Goti", "Event": "Test"})
    for tag in ("Event", "Site", "Date", "Round", "White", "Black", "Result"):
        assert f"[{tag} " in text
    assert '[GameType "25,W,8,8,A0,0"]' in text
    assert '[SetUp "1"]' in text
    assert read_pdn(text)[0].game.start == game.start
    assert text.rstrip().endswith("1. c3:e5:g7 1-0")


def test_a_game_starting_with_the_second_mover_is_numbered_with_an_ellipsis() -> None:
    game = Game.from_fen("W:W21-32:B1-12", "english")
    game.play("23-19")
    game.play("11-15")
    assert write_pdn(game).rstrip().endswith("1... 23-19 2. 11-15 *")
    assert read_pdn(write_pdn(game))[0].game.moves == game.moves


def test_illegal_move_in_pdn_names_the_ply() -> None:
    with pytest.raises(InvalidPdnError, match="ply 2, 11-16"):
        read_pdn("1. 11-15 11-16 *")


def test_garbage_in_movetext_is_refused() -> None:
    with pytest.raises(InvalidPdnError, match="unexpected"):
        read_pdn("1. 11-15 hello *")


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    variant=st.sampled_from(["english", "russian"]),
    ending=st.sampled_from(["play", "resign", "agree", "unfinished"]),
)
def test_pdn_round_trip(seed: int, variant: str, ending: str) -> None:
    rng = random.Random(seed)
    game = Game(variant)
    limit = rng.randrange(2, 160)
    while not game.is_over and game.ply < limit:
        game.push(rng.choice(game.legal_moves))
    if not game.is_over and ending == "resign":
        game.resign(game.turn)
    elif (
        not game.is_over
        and ending == "agree"
        and game.ply >= 2
        and not game.draw_offer_wait(game.turn)
    ):
        game.offer_draw(game.turn)
        game.push(game.legal_moves[0])
        if not game.is_over:
            game.accept_draw(game.turn)
    (read,) = read_pdn(write_pdn(game, {"Event": "Round trip"}))
    assert read.tags["Event"] == "Round trip"
    assert read.game.moves == game.moves
    assert read.game.position == game.position
    assert read.game.outcome == game.outcome
