"""Glicko-2 against Glickman's worked example in "Example of the Glicko-2 system" (revision of
November 30, 2013), and the properties a player relies on: no games, draws, bounds, errors."""

from __future__ import annotations

import doctest
import math
import sys
from types import ModuleType

import grimp
import pytest
from hypothesis import given
from hypothesis import strategies as st

import goti.ratings
import goti.ratings.glicko2
from goti.ratings import (
    MAX_DEVIATION,
    PROVISIONAL_DEVIATION,
    RatedGame,
    Rating,
    after_game,
    both_after_game,
    estimate,
    rate,
)
from goti.ratings.glicko2 import GLICKO2_SCALE

# The example: a player at 1500/200/0.06 beats a 1400/30 and loses to a 1550/100 and a
# 1700/300 in one rating period, with tau = 0.5.
EXAMPLE_PLAYER = Rating(1500, 200, 0.06)
EXAMPLE_GAMES = (
    RatedGame(Rating(1400, 30), 1),
    RatedGame(Rating(1550, 100), 0),
    RatedGame(Rating(1700, 300), 0),
)
EXAMPLE_TAU = 0.5


def test_the_papers_example_ends_where_the_paper_does() -> None:
    new = rate(EXAMPLE_PLAYER, EXAMPLE_GAMES, tau=EXAMPLE_TAU)
    # The paper prints mu' = -0.2069, phi' = 0.8722 and sigma' = 0.05999 (its step 7 and 5).
    assert new.mu == pytest.approx(-0.2069, abs=5e-5)
    assert new.phi == pytest.approx(0.8722, abs=5e-5)
    assert new.volatility == pytest.approx(0.05999, abs=1e-5)
    # Its step 8 converts the rounded mu' and phi': r' = 1464.06, RD' = 151.52.  Rounding mu'
    # to four places moves r' by up to 173.7178 * 0.00005 = 0.009, hence the wider tolerance.
    assert new.rating == pytest.approx(1464.06, abs=0.015)
    assert new.deviation == pytest.approx(151.52, abs=0.01)


def test_the_papers_example_passes_through_its_intermediate_values() -> None:
    # The paper prints v = 1.7785 and delta = -0.4834, computed from g and E rounded to three
    # or four places; to full precision they are 1.7790 and -0.4839.
    variance, improvement = estimate(EXAMPLE_PLAYER, EXAMPLE_GAMES)
    assert variance == pytest.approx(1.7785, abs=1e-3)
    assert improvement == pytest.approx(-0.4834, abs=1e-3)


def _paper_volatility_equation(sigma: float, player: Rating, v: float, delta: float) -> float:
    """The paper's step-5 f(x), at x = ln(sigma^2), with the example's tau."""
    x = math.log(sigma**2)
    a = math.log(player.volatility**2)
    phi2 = player.phi**2
    return (
        math.exp(x) * (delta**2 - phi2 - v - math.exp(x)) / (2 * (phi2 + v + math.exp(x)) ** 2)
        - (x - a) / EXAMPLE_TAU**2
    )


def test_the_new_volatility_solves_the_papers_equation() -> None:
    # Plain bisection on the paper's f, written out here, as a check on the Illinois search.
    variance, improvement = estimate(EXAMPLE_PLAYER, EXAMPLE_GAMES)
    low, high = 0.01, 0.2
    for _ in range(100):
        middle = (low + high) / 2
        if _paper_volatility_equation(middle, EXAMPLE_PLAYER, variance, improvement) > 0:
            low = middle
        else:
            high = middle
    new = rate(EXAMPLE_PLAYER, EXAMPLE_GAMES, tau=EXAMPLE_TAU)
    assert new.volatility == pytest.approx(low, rel=1e-6)


def test_a_period_without_games_only_widens_the_deviation() -> None:
    idle = rate(EXAMPLE_PLAYER, [])
    # The paper's step 6 alone: phi' = sqrt(phi^2 + sigma^2), on its internal scale.
    assert idle.deviation == pytest.approx(math.sqrt(200**2 + (0.06 * GLICKO2_SCALE) ** 2))
    assert idle.deviation > EXAMPLE_PLAYER.deviation
    assert (idle.rating, idle.volatility) == (EXAMPLE_PLAYER.rating, EXAMPLE_PLAYER.volatility)


def test_the_deviation_never_grows_past_an_unrated_players() -> None:
    assert rate(Rating(1700, 349.9, 0.06), []).deviation == MAX_DEVIATION
    assert rate(Rating(), []).deviation == MAX_DEVIATION
    # A player at the bound who meets a wholly unknown opponent learns little, but not nothing.
    assert after_game(Rating(), Rating(), 0.5).deviation < MAX_DEVIATION


def test_a_draw_between_equals_changes_only_their_deviations() -> None:
    player = Rating(1620, 80, 0.06)
    first, second = both_after_game(player, player, 0.5)
    assert first == second
    assert first.rating == pytest.approx(player.rating, abs=1e-9)
    assert first.deviation < player.deviation
    assert first.volatility == pytest.approx(player.volatility, abs=1e-4)


def test_between_equals_the_winner_gains_what_the_loser_loses() -> None:
    player = Rating(1500, 120, 0.06)
    winner, loser = both_after_game(player, player, 1)
    assert winner.rating - player.rating == pytest.approx(player.rating - loser.rating)
    assert winner.rating > player.rating
    assert winner.deviation == pytest.approx(loser.deviation)


def test_both_players_are_rated_against_the_others_rating_from_before_the_game() -> None:
    black, white = Rating(1450, 150, 0.06), Rating(1600, 90, 0.06)
    new_black, new_white = both_after_game(black, white, 0)
    assert new_black == after_game(black, white, 0)
    assert new_white == after_game(white, black, 1)
    # Rating the second player against the first's new rating would give another answer.
    assert new_white != after_game(white, new_black, 1)


def test_an_upset_moves_a_rating_more_than_an_expected_result() -> None:
    player = Rating(1500, 100, 0.06)
    beat_stronger = after_game(player, Rating(1800, 60), 1)
    beat_weaker = after_game(player, Rating(1200, 60), 1)
    assert beat_stronger.rating - player.rating > 4 * (beat_weaker.rating - player.rating) > 0


@given(
    rating=st.floats(100, 3500),
    deviation=st.floats(30, MAX_DEVIATION),
    volatility=st.floats(0.02, 0.12),
    opponent_rating=st.floats(100, 3500),
    opponent_deviation=st.floats(30, MAX_DEVIATION),
    score=st.sampled_from([0.0, 0.5, 1.0]),
    tau=st.floats(0.3, 1.2),
)
def test_one_game_keeps_a_rating_in_bounds_and_moving_the_right_way(
    rating: float,
    deviation: float,
    volatility: float,
    opponent_rating: float,
    opponent_deviation: float,
    score: float,
    tau: float,
) -> None:
    player = Rating(rating, deviation, volatility)
    new = after_game(player, Rating(opponent_rating, opponent_deviation, 0.06), score, tau=tau)
    assert math.isfinite(new.rating)
    # A game tells something about the player: the deviation ends below phi*, the old one
    # widened by the new volatility (the paper's step 6) and held to 350.
    pre_period = min(math.hypot(deviation, new.volatility * GLICKO2_SCALE), MAX_DEVIATION)
    assert 0 < new.deviation < pre_period
    assert new.volatility > 0
    if score == 1.0:
        assert new.rating >= player.rating
    if score == 0.0:
        assert new.rating <= player.rating


def test_a_rating_is_provisional_until_its_deviation_falls_below_110() -> None:
    assert Rating().is_provisional
    assert Rating(1500, PROVISIONAL_DEVIATION, 0.06).is_provisional
    assert not Rating(1500, 109.9, 0.06).is_provisional


def test_a_new_player_is_settled_after_about_a_dozen_games_with_settled_opponents() -> None:
    player = Rating()
    games = 0
    while player.is_provisional:
        player = after_game(player, Rating(1500, 60, 0.06), (1, 0, 0.5)[games % 3])
        games += 1
    assert 8 <= games <= 16


@pytest.mark.parametrize("score", [2, -1, 0.3, 0.75, math.nan])
def test_a_score_other_than_a_win_draw_or_loss_is_refused(score: float) -> None:
    with pytest.raises(ValueError, match=r"score must be 1 \(a win\), 0\.5 \(a draw\) or 0"):
        after_game(Rating(), Rating(), score)


@pytest.mark.parametrize(
    ("rating", "deviation", "volatility", "message"),
    [
        (1500, -50, 0.06, "deviation must be above 0 and at most 350, not -50"),
        (1500, 0, 0.06, "deviation must be above 0 and at most 350, not 0"),
        (1500, 351, 0.06, "deviation must be above 0 and at most 350, not 351"),
        (1500, 200, 0, "volatility must be a finite number above 0, not 0"),
        (1500, 200, -0.06, "volatility must be a finite number above 0, not -0.06"),
        (math.inf, 200, 0.06, "rating must be a finite number, not inf"),
        (math.nan, 200, 0.06, "rating must be a finite number, not nan"),
    ],
)
def test_a_rating_out_of_range_is_refused(
    rating: float, deviation: float, volatility: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Rating(rating, deviation, volatility)


@pytest.mark.parametrize("tau", [0, -0.5, math.inf])
def test_a_system_constant_out_of_range_is_refused(tau: float) -> None:
    with pytest.raises(ValueError, match="tau must be a finite number above 0"):
        after_game(Rating(), Rating(), 1, tau=tau)


def test_a_period_without_games_has_no_estimate() -> None:
    with pytest.raises(ValueError, match="no games"):
        estimate(Rating(), [])


@pytest.mark.parametrize("module", [goti.ratings, goti.ratings.glicko2])
def test_docstring_examples(module: ModuleType) -> None:
    failures, _ = doctest.testmod(module)
    assert failures == 0


def test_the_ratings_import_only_the_standard_library() -> None:
    # lint-imports forbids Goti's packages and its dependencies by name; this catches the rest.
    graph = grimp.build_graph("goti", include_external_packages=True)
    ratings = graph.find_descendants("goti.ratings") | {"goti.ratings"}
    outside = {
        f"{module} imports {imported}"
        for module in ratings
        for imported in graph.find_modules_directly_imported_by(module)
        if imported not in ratings and imported.split(".")[0] not in sys.stdlib_module_names
    }
    assert sorted(outside) == []
