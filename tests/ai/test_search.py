"""The search finds what it must: shots, conversions, draws by the rules; and stays legal."""

from __future__ import annotations

import pickle
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goti.ai import Level, SearchResult, choose_move
from goti.ai.evaluation import WIN
from goti.ai.levels import SETTINGS
from goti.ai.search import SLOT_BYTES, Searcher, SearchLimits, SearchMemory, new_table, slots_within
from goti.rules.color import Color
from goti.rules.game import Game, GameState, position_key
from goti.rules.moves import Move

from .out_of_book import game_past_the_book


def _game(fen: str, variant: str, moves: str = "") -> Game:
    game = Game.from_fen(fen, variant)
    for text in moves.split():
        game.play(text)
    return game


def _material(game: Game, side: str) -> int:
    position = game.position
    pieces = position.white if side == "white" else position.black
    return pieces.bit_count()


# A quiet move gives one man to take two: 17-14, 10x17, 21x14x5 in English; the same idea in
# Russian.  A two-ply look does not see it; the search must.
SHOTS = [
    ("english", "W:W18,17,21:B9,12,10,22", "17-14"),
    ("russian", "W:W25,18,7:B22,16,17,9", "b2-a3"),
]


@pytest.mark.parametrize(("variant", "fen", "shot"), SHOTS)
@pytest.mark.parametrize("level", [Level.NORMAL, Level.HARD])
def test_the_search_finds_a_shot_that_wins_material(
    variant: str, fen: str, shot: str, level: Level
) -> None:
    game = _game(fen, variant)
    result = choose_move(game.state(), level, seed=3)
    assert result.notation == shot


@pytest.mark.parametrize(("variant", "fen", "shot"), SHOTS)
def test_the_shot_is_worth_a_man_more_than_any_other_move(
    variant: str, fen: str, shot: str
) -> None:
    position = _game(fen, variant).position
    scores = Searcher(position).score_all(depth=6)
    assert scores is not None
    by_move = dict(
        zip((position.notation(move) for move in position.legal_moves), scores, strict=True)
    )
    best_other = max(score for text, score in by_move.items() if text != shot)
    assert by_move[shot] - best_other >= 100


@pytest.mark.parametrize(("variant", "fen", "shot"), SHOTS)
def test_the_shot_wins_material_when_played_out(variant: str, fen: str, shot: str) -> None:
    game = _game(fen, variant)
    before = _material(game, "white") - _material(game, "black")
    for _ in range(6):
        if game.is_over:
            break
        game.push(choose_move(game.state(), Level.NORMAL, seed=5).move)
    assert game.moves[0] == shot
    assert _material(game, "white") - _material(game, "black") >= before + 1


def _play_out(game: Game, nodes: int, max_plies: int = 80) -> None:
    """Both sides play the full search with a node budget: the same game on every machine."""
    while not game.is_over and game.ply < max_plies:
        state = game.state()
        searcher = Searcher(state.position, history=state.repetition, quiet_plies=state.quiet_plies)
        report = searcher.iterate(SearchLimits(max_nodes=nodes))
        game.push(list(state.position.legal_moves)[report.move_index])


def _white_won(game: Game) -> bool:
    return game.outcome is not None and game.outcome.winner is Color.WHITE


@pytest.mark.parametrize(
    "fen",
    [
        "W:WK21,K10:BK26",  # the lone king in the open
        "W:WK3,K6:BK28",  # the lone king next to its double corner
        "W:WK14,K18:BK1",  # the lone king in its double corner
        "W:WK29,K30:BK28",  # from one corner to the other
    ],
)
def test_two_kings_beat_one_in_english(fen: str) -> None:
    game = _game(fen, "english")
    _play_out(game, nodes=5_000)
    assert _white_won(game)


# Two flying kings cannot catch one, nor can three if the lone king holds the main road
# a1-h8; three kings that hold it themselves win.
@pytest.mark.parametrize("fen", ["W:WK20,K10,K6:BK3", "W:WK21,K15,K19:BK2"])
def test_three_kings_beat_one_off_the_main_road_in_russian(fen: str) -> None:
    game = _game(fen, "russian")
    _play_out(game, nodes=20_000)
    assert _white_won(game)


@pytest.mark.slow
@pytest.mark.parametrize(
    "fen",
    [
        "W:WK16,K2,K30:BK21",
        "W:WK32,K1,K6:BK30",
        "W:WK18,K27,K6:BK17",
        "W:WK5,K4,K3:BK13",
        "W:WK26,K29,K11:BK1",
    ],
)
def test_three_kings_beat_one_from_farther_in_russian(fen: str) -> None:
    game = _game(fen, "russian")
    _play_out(game, nodes=20_000)
    assert _white_won(game)


def test_a_lone_flying_king_on_the_main_road_is_a_draw_to_the_search() -> None:
    game = _game("W:WK1,K2,K3:BK22", "russian")
    result = choose_move(game.state(), Level.HARD)
    assert abs(result.score) < 100


def test_the_losing_side_takes_a_threefold_repetition() -> None:
    # One king against two: the lone king's 18-22 brings back a position for the third time.
    game = _game("B:WK22:BK1,K3", "english", "1-5 22-18 5-1 18-22 1-5 22-18 5-1")
    for level in Level:
        result = choose_move(game.state(), level, seed=1)
        assert result.notation == "18-22"
        # Master's contempt for draws prices this one below level, still far above a loss.
        assert result.score == -SETTINGS[level].contempt
    game.push(choose_move(game.state(), Level.HARD).move)
    assert game.outcome is not None and game.outcome.winner is None


def test_the_winning_side_steers_clear_of_a_threefold_repetition() -> None:
    # Black's 5-1 would repeat the start a third time; with two kings against one it won't.
    game = _game("W:WK22:BK1,K3", "english", "22-18 1-5 18-22 5-1 22-18 1-5 18-22")
    result = choose_move(game.state(), Level.HARD)
    assert result.notation != "5-1"
    assert result.score > 100


def test_contempt_plays_on_where_a_level_game_could_repeat() -> None:
    # Two kings each, level; Black's 1-5 brings back the starting position a third time.
    game = _game("W:WK9,K24:BK31,K5", "english", "9-14 5-1 14-9 1-5 9-14 5-1 14-9")
    state = game.state()
    repeating = [game.position.notation(move) for move in game.legal_moves].index("1-5")

    def search(contempt: int) -> tuple[int, int]:
        searcher = Searcher(
            state.position,
            history=state.repetition,
            quiet_plies=state.quiet_plies,
            contempt=contempt,
        )
        report = searcher.iterate(SearchLimits(max_depth=8))
        return report.move_index, report.score

    # Without contempt the draw is as good as anything else here, and the search takes it.
    assert search(0) == (repeating, 0)
    # With it the draw costs the side to move 25, more than playing on costs it.
    index, score = search(25)
    assert index != repeating
    assert -25 < score <= 0
    assert SETTINGS[Level.MASTER].contempt > 0 and SETTINGS[Level.HARD].contempt == 0


def _quiet_walk(game: Game, plies: int) -> None:
    """Shuffle kings without a capture and without any position coming up a third time."""
    while game.quiet_plies < plies:
        state = game.state()
        for move in sorted(game.legal_moves, key=lambda move: move.path):
            after = game.position.push(move)
            if state.repetition.count(position_key(after)) == 0 and not after.must_capture:
                game.push(move)
                break
        else:
            raise AssertionError(f"the walk is stuck at ply {game.ply}")


def test_the_move_limit_is_a_draw_inside_the_search() -> None:
    # Two kings each: at the 79th quiet ply, any quiet move ends the game drawn.
    game = _game("W:WK29,K21:BK4,K12", "english")
    _quiet_walk(game, 79)
    searcher = Searcher(
        game.position, history=game.state().repetition, quiet_plies=game.quiet_plies
    )
    scores = searcher.score_all(depth=3)
    assert scores is not None and set(scores) == {0}


def test_a_search_over_budget_still_returns_a_legal_move() -> None:
    game = _game("W:W18,21,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,7,8,9,10,11,12,13", "english")
    for budget in (0.0, 0.001, 0.01):
        result = choose_move(game.state(), Level.HARD, time_budget=budget)
        assert result.move in game.legal_moves


def test_the_budget_is_cpu_time_and_respected() -> None:
    """The search thinks for its budget of CPU time and stops soon after it (how deep it gets
    in that time is the machine's speed: bench/ai_depth.py measures it)."""
    game = game_past_the_book("russian")
    budget = 0.05
    started = time.thread_time()
    result = choose_move(game.state(), Level.HARD, time_budget=budget)
    spent = time.thread_time() - started
    assert budget <= result.seconds <= spent < 4 * budget
    assert result.depth >= 1


def test_a_planned_search_stops_once_its_choice_looks_settled() -> None:
    """With a typical move's time far below its cap, a search stops deepening near the
    former, not at the latter: the cap is for a choice that stays open."""
    game = game_past_the_book("english")
    cap = 2.0
    started = time.thread_time()
    report = Searcher(game.position).iterate(SearchLimits(cpu_seconds=cap, target_cpu_seconds=0.02))
    assert time.thread_time() - started < cap / 4
    assert report.depth >= 1 and 0 <= report.move_index < len(game.legal_moves)


def test_a_full_search_memory_costs_the_next_search_nothing() -> None:
    """A memory kept from move to move stays the size it was made, however much was searched,
    and a full one is not emptied on the next move's clock: a short search after a long one
    keeps to its budget (a memory cleared in bulk once cost a 12 ms Quick move 90 ms)."""
    slots = 1 << 12
    memory = SearchMemory(new_table(slots))
    game = game_past_the_book("russian")
    # A node count, not CPU time: on a busy machine 0.3 s of CPU once searched too few nodes
    # to fill half the table.
    long_search = Searcher(game.position, memory=memory).iterate(SearchLimits(max_nodes=40_000))
    assert long_search.nodes > 4 * slots
    assert len(memory.table) == slots
    assert sum(entry is not None for entry in memory.table) > slots // 2
    budget = 0.012
    game.push(game.legal_moves[long_search.move_index])
    started = time.thread_time()
    short = Searcher(game.position, memory=memory).iterate(SearchLimits(cpu_seconds=budget))
    assert time.thread_time() - started < 5 * budget
    assert 0 <= short.move_index < len(game.legal_moves)
    assert len(memory.table) == slots


def test_a_table_has_a_power_of_two_slots() -> None:
    with pytest.raises(ValueError, match="power of two"):
        new_table(3000)


@pytest.mark.parametrize("megabytes", [0.01, 0.5, 1, 64, 100, 128])
def test_a_memory_budget_gives_the_most_slots_that_fit(megabytes: float) -> None:
    slots = slots_within(megabytes)
    assert slots & (slots - 1) == 0 and slots >= 1024
    assert slots == 1024 or slots * SLOT_BYTES <= megabytes * 1_000_000
    assert 2 * slots * SLOT_BYTES > megabytes * 1_000_000


def test_a_node_limit_stops_the_search() -> None:
    game = Game("english")
    searcher = Searcher(game.position)
    report = searcher.iterate(SearchLimits(max_nodes=2000))
    assert report.nodes < 2600
    assert 0 <= report.move_index < len(game.legal_moves)


def test_a_forced_move_comes_back_at_once() -> None:
    game = _game("W:W22:B18,1", "english")
    result = choose_move(game.state(), Level.HARD)
    assert result.notation == "22x15"
    # Only a short search, for the score: not one that thinks for the level's budget.
    assert result.depth <= 4
    assert result.seconds < SETTINGS[Level.HARD].cpu_seconds


def test_results_cross_process_boundaries() -> None:
    state = Game("english").state()
    copied_state: GameState = pickle.loads(pickle.dumps(state))
    result = choose_move(copied_state, Level.NORMAL, seed=1)
    copied: SearchResult = pickle.loads(pickle.dumps(result))
    assert copied == result
    assert isinstance(copied.move, Move)


def test_a_finished_game_has_no_move_to_choose() -> None:
    game = _game("W:W:B1", "english")
    with pytest.raises(ValueError, match="over"):
        choose_move(game.state(), Level.EASY)


def test_level_names_are_accepted() -> None:
    result = choose_move(Game().state(), "Quick")
    assert result.move in Game().legal_moves
    with pytest.raises(ValueError, match="unknown level"):
        choose_move(Game().state(), "grandmaster")


def _random_state(variant: str, seed: int, plies: int) -> GameState:
    chance = random.Random(seed)
    game = Game(variant)
    for _ in range(plies):
        if game.is_over:
            break
        game.push(chance.choice(game.legal_moves))
    return game.state()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    variant=st.sampled_from(["english", "russian"]),
    seed=st.integers(min_value=0, max_value=2**32),
    plies=st.integers(min_value=0, max_value=120),
    level=st.sampled_from([Level.EASY, Level.NORMAL, Level.QUICK]),
)
def test_the_move_is_always_legal(variant: str, seed: int, plies: int, level: Level) -> None:
    state = _random_state(variant, seed, plies)
    if state.outcome is not None:
        return
    result = choose_move(state, level, seed=seed, time_budget=0.02)
    legal = list(state.position.legal_moves)
    assert result.move in legal
    assert result.notation == state.position.notation(result.move)
    assert state.position.parse_move(result.notation) == result.move


@pytest.mark.parametrize("level", list(Level))
def test_the_principal_variation_is_a_legal_line_from_the_move(level: Level) -> None:
    game = _game("W:W25,18,7:B22,16,17,9", "russian")
    result = choose_move(game.state(), level, seed=2)
    assert result.principal_variation[0] == result.notation
    assert 1 <= len(result.principal_variation) <= max(result.depth, 1)
    for text in result.principal_variation:
        game.play(text)


@pytest.mark.parametrize(
    ("fen", "run"),
    [
        ("B:WK19,K23:BK6", "6-1"),
        ("B:WK14,K15:BK24", "24-28"),
        ("B:WK10,K11:BK27", "27-32"),
        ("B:WK26,K30:BK10", "10-6"),
    ],
)
def test_a_lone_english_king_runs_for_the_double_corner(fen: str, run: str) -> None:
    position = _game(fen, "english").position
    report = Searcher(position).iterate(SearchLimits(max_nodes=20_000))
    assert position.notation(list(position.legal_moves)[report.move_index]) == run


# Positions where White is left with no move two plies from now, at the horizon of a two-ply
# search, where the evaluation must see it.  In the first, White's man on 5 is held by Black's
# man on 1 and either move of White's king is taken by Black's man on 22 (22x29 or 22x31).
# In the second, White's only move, 8-4, crowns in the corner, and 3-8 leaves the new king
# no move, Black's king on 11 standing behind 8.
BLOCKED_AT_THE_HORIZON = ["W:W5,K30:B1,22", "W:W8:BK11,K3"]


@pytest.mark.parametrize("fen", BLOCKED_AT_THE_HORIZON)
@pytest.mark.parametrize("level", [Level.EASY, Level.NORMAL, Level.HARD, Level.QUICK])
def test_a_side_left_without_a_move_has_lost_even_at_the_horizon(level: Level, fen: str) -> None:
    game = _game(fen, "english")
    result = choose_move(game.state(), level, seed=1)
    assert result.proven_loss
    assert result.forced_in_plies == 2
    scores = Searcher(game.position).score_all(depth=2)
    assert scores is not None
    assert all(score == -(WIN - 2) for score in scores)


@pytest.mark.parametrize("variant", ["english", "russian"])
def test_the_deep_entries_outlive_the_frontier_in_a_small_table(variant: str) -> None:
    """A table far smaller than the tree still holds the expected line: each bucket keeps its
    deepest entry beside the newest, so the many shallow entries near the leaves do not push
    out the few deep ones near the root (with every new entry taking its slot, the line read
    back from such a table was one or two moves long)."""
    game = game_past_the_book(variant)
    searched = 0
    while searched < 3:
        if len(game.legal_moves) > 1:
            searcher = Searcher(game.position, memory=SearchMemory(new_table(1 << 10)))
            report = searcher.iterate(SearchLimits(max_depth=12))
            assert report.depth == 12 and report.nodes > 16 * (1 << 10)
            first = game.position.raw_moves()[report.move_index]
            assert len(searcher.principal_variation(first, report.depth)) >= 4
            searched += 1
        game.push(game.legal_moves[game.ply % len(game.legal_moves)])
