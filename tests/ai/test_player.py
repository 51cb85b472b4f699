"""The levels keep their promises, and the computer answers draw offers sensibly."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest

from goti.ai import DrawDecision, Level, choose_move, decide_draw
from goti.ai.evaluation import WIN
from goti.ai.levels import SETTINGS
from goti.ai.player import _pick_with_noise, prepare_levels
from goti.ai.search import Searcher, SearchLimits
from goti.rules.color import Color
from goti.rules.game import Game, GameState, position_key

from .out_of_book import game_past_the_book


@pytest.fixture(autouse=True, scope="module")
def _prepared_as_a_worker() -> None:
    """As an AI worker does before its first request: otherwise the first timed move here
    also reads an opening book, and a full garbage collection of pytest's heap landing in
    that read made Quick's first move take 77 ms alone and 175 ms in a whole run (not so with
    the collector off), against its 12."""
    prepare_levels()


# -- the levels are ordered ---------------------------------------------------------------

OPENINGS = {
    "english": ["11-15", "23-19", "8-11"],
    "russian": ["c3-d4", "f6-g5", "g3-f4"],
}


def _material(game: Game, color: Color) -> float:
    position = game.position
    king = 2.5 if game.variant.flying_kings else 1.5
    return position.count(color, kings=False) + king * position.count(color, kings=True)


def _play(variant: str, first: Level, second: Level, first_color: Color, plies: int) -> float:
    """One game; a game still running at ``plies`` goes to the side a man ahead, else drawn."""
    game = Game(variant)
    for text in OPENINGS[variant]:
        game.play(text)
    seed = 0
    while not game.is_over and game.ply < plies:
        seed += 1
        level = first if game.turn is first_color else second
        game.push(choose_move(game.state(), level, seed=seed).move)
    if game.outcome is not None:
        winner = game.outcome.winner
        return 0.5 if winner is None else float(winner is first_color)
    lead = _material(game, first_color) - _material(game, first_color.opponent)
    return 1.0 if lead >= 1 else 0.0 if lead <= -1 else 0.5


def _match(first: Level, second: Level, plies: int) -> float:
    """The first level's mean score over both variants, each with both colours."""
    scores = [
        _play(variant, first, second, color, plies)
        for variant in OPENINGS
        for color in (Color.WHITE, Color.BLACK)
    ]
    return sum(scores) / len(scores)


def test_levels_are_ordered() -> None:
    started = time.process_time()
    assert _match(Level.NORMAL, Level.EASY, plies=100) > 0.5
    assert _match(Level.HARD, Level.NORMAL, plies=50) > 0.5
    assert time.process_time() - started < 60


# -- what each level promises --------------------------------------------------------------


def _positions(variant: str, count: int) -> list[GameState]:
    """Middle-game positions from lightly randomized play, the same on every run."""
    chance = random.Random(5)
    found: list[GameState] = []
    while len(found) < count:
        game = Game(variant)
        for _ in range(chance.randrange(6, 30)):
            if game.is_over:
                break
            if chance.random() < 0.7:
                move = choose_move(game.state(), Level.EASY, seed=game.ply).move
            else:
                move = chance.choice(game.legal_moves)
            game.push(move)
        if not game.is_over and len(game.legal_moves) >= 3:
            found.append(game.state())
    return found


def _losses(states: list[GameState], level: Level) -> list[int]:
    """How much worse than the best each chosen move is, by a deeper search."""
    losses = []
    for seed, state in enumerate(states):
        scores = Searcher(state.position).score_all(depth=5)
        assert scores is not None
        chosen = choose_move(state, level, seed=seed).move
        losses.append(max(scores) - scores[list(state.position.legal_moves).index(chosen)])
    return losses


def test_easy_makes_real_mistakes_and_normal_rarely_does() -> None:
    states = _positions("english", 24) + _positions("russian", 24)
    easy = sorted(_losses(states, Level.EASY))
    normal = _losses(states, Level.NORMAL)
    easy_blunders = sum(loss >= 80 for loss in easy)
    normal_blunders = sum(loss >= 80 for loss in normal)
    assert easy_blunders >= 4  # real mistakes, to be punished
    assert easy[len(easy) // 2] <= 30  # but mostly plausible moves
    assert normal_blunders <= 4
    assert easy_blunders > normal_blunders


def test_easy_never_stalls() -> None:
    for state in _positions("russian", 8):
        started = time.thread_time()
        choose_move(state, Level.EASY, seed=1)
        assert time.thread_time() - started < SETTINGS[Level.EASY].cpu_seconds + 0.05


def test_the_same_seed_plays_the_same_move() -> None:
    for state in _positions("english", 6):
        first = choose_move(state, Level.EASY, seed=42)
        again = choose_move(state, Level.EASY, seed=42)
        assert first.move == again.move


def test_normal_looks_four_plies_ahead() -> None:
    result = choose_move(Game("english").state(), Level.NORMAL, seed=1)
    assert result.depth == 4


@pytest.mark.parametrize("variant", ["english", "russian"])
def test_quick_stops_near_its_budget(variant: str) -> None:
    """Quick's budget is CPU time, and its answer comes within a few budgets of it (how deep it
    sees in that time is the machine's speed: bench/ai_depth.py --level quick measures it)."""
    budget = SETTINGS[Level.QUICK].cpu_seconds
    for state in _positions(variant, 6):
        started = time.thread_time()
        result = choose_move(state, Level.QUICK)
        assert time.thread_time() - started < 5 * budget
        assert result.depth >= 1


@pytest.mark.parametrize("level", [Level.HARD, Level.MASTER])
def test_hard_and_master_plan_their_time_around_their_typical_move(level: Level) -> None:
    """Hard's and Master's own time is planned: no new iteration once most of a typical move's
    time is spent, more while the choice is open, never past the level's most (how far it sees
    in that time is the machine's speed: bench/ai_depth.py measures it)."""
    settings = SETTINGS[level]
    assert settings.most_cpu_seconds is not None
    for variant in ("english", "russian"):
        result = choose_move(game_past_the_book(variant).state(), level)
        assert settings.cpu_seconds / 2 <= result.seconds < settings.most_cpu_seconds * 1.2
        assert result.depth >= 1


def test_a_callers_budget_is_spent_whatever_the_position() -> None:
    """A budget from the caller is a fixed one: the search thinks for all of it, not less
    where its choice settles early, nor more."""
    budget = 0.2
    result = choose_move(game_past_the_book("english").state(), Level.HARD, time_budget=budget)
    assert budget <= result.seconds < 2 * budget


# -- draw offers ---------------------------------------------------------------------------


def _state(fen: str, variant: str = "english") -> GameState:
    return Game.from_fen(fen, variant).state()


@pytest.mark.parametrize("level", list(Level))
def test_every_level_accepts_a_draw_when_losing(level: Level) -> None:
    decision = decide_draw(_state("W:W30,31:B1,2,3,4"), level)
    assert decision == DrawDecision(accept=True, score=decision.score)
    assert decision.score < 0


@pytest.mark.parametrize("level", list(Level))
def test_no_level_accepts_a_draw_while_clearly_winning(level: Level) -> None:
    decision = decide_draw(_state("B:W30,31:B1,2,3,4"), level)
    assert not decision.accept
    assert decision.score > 100


def _level_game(plies: int) -> GameState:
    """Two kings each, shuffled for ``plies`` without a capture or a repetition."""
    game = Game.from_fen("W:WK29,K30:BK3,K4", "english")
    while game.ply < plies:
        state = game.state()
        for move in sorted(game.legal_moves, key=lambda move: move.path):
            after = game.position.push(move)
            if state.repetition.count(position_key(after)) == 0 and not after.must_capture:
                game.push(move)
                break
        else:
            raise AssertionError(f"the walk is stuck at ply {game.ply}")
    return game.state()


@pytest.mark.parametrize("level", [Level.HARD, Level.MASTER])
def test_hard_and_master_accept_a_draw_in_a_level_quiet_position_late_in_the_game(
    level: Level,
) -> None:
    state = _level_game(40)
    assert decide_draw(state, level).accept
    assert not decide_draw(state, Level.NORMAL).accept


def test_hard_refuses_a_level_draw_early_in_the_game() -> None:
    assert not decide_draw(_level_game(10), Level.HARD).accept


def test_hard_refuses_a_level_draw_with_a_capture_pending() -> None:
    # Even material, but a capture is on the board: not quiet.
    state = _state("W:W22,30:B18,3")
    late = replace(state, moves=("",) * 40)
    decision = decide_draw(late, Level.HARD)
    assert not decision.accept or decision.score <= -70


def test_a_finished_game_has_no_draw_to_decide() -> None:
    with pytest.raises(ValueError, match="over"):
        decide_draw(_state("W:W:B1"), Level.HARD)


def test_a_wall_clock_deadline_stops_the_search_whatever_its_cpu_budget() -> None:
    """A caller that must answer by a deadline gets a move by then, even with CPU to spare."""
    state = Game("russian").state()
    budget = 5.0
    result = choose_move(
        state, Level.HARD, time_budget=budget, wall_deadline=time.monotonic() + 0.05
    )
    assert result.move in state.position.legal_moves
    # Stopped by the deadline, not the budget: a thread's CPU time runs no faster than the
    # clock, so past a deadline 50 ms away it spent nowhere near its 5 s of CPU.
    assert result.seconds < budget / 10


# -- lost games ------------------------------------------------------------------------------

LOST = "W:WK30:BK8,K21,17"
"""White to move has lost: 30-25 is taken at once (21x30), and 30-26 17-22 forces 26x17,
then 21x14 takes the last piece.  The longest defence ends the game in four plies."""
ONE_MOVE_SAVES = "W:W9,22:B25,5"
"""White to move: 22-18 and 22-17 each lose both men at once (5x14x23, 5x14x21); 9-6, on its
way to the king row, keeps the game going."""


@pytest.mark.parametrize("level", [Level.EASY, Level.NORMAL, Level.HARD])
def test_every_level_knows_a_lost_game_and_holds_out_longest(level: Level) -> None:
    state = _state(LOST)
    for seed in range(5):
        result = choose_move(state, level, seed=seed)
        assert result.proven_loss
        assert result.forced_in_plies == 4
        assert result.score == -(WIN - 4)
        assert result.notation == "30-26"


def test_easy_never_gives_up_a_game_that_one_move_saves() -> None:
    state = _state(ONE_MOVE_SAVES)
    for seed in range(100):
        result = choose_move(state, Level.EASY, seed=seed)
        assert not result.proven_loss
        assert result.forced_in_plies == 0
        assert result.notation == "9-6"
    for level in (Level.NORMAL, Level.HARD):
        assert not choose_move(state, level, seed=1).proven_loss


def test_a_losing_move_picked_by_the_noise_is_no_proof_of_a_lost_game() -> None:
    """With noise wide enough to pick the moves that lose, only the best move's true score
    says whether the game is lost."""
    state = _state(ONE_MOVE_SAVES)
    wild = replace(SETTINGS[Level.EASY], noise=1_000_000)
    picked = set()
    for seed in range(40):
        chosen = _pick_with_noise(
            Searcher(state.position), wild, SearchLimits(), random.Random(seed)
        )
        assert chosen is not None
        index, _, proven_loss = chosen
        picked.add(index)
        assert not proven_loss
    assert len(picked) == len(state.position.legal_moves)
