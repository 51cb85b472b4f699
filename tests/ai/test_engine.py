"""The ``goti engine`` line protocol, in process and over real pipes."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from goti.ai.engine import answer, main, parse_request, run_engine
from goti.ai.levels import Level
from goti.rules.game import Game
from goti.rules.position import Position


def _run(text: str) -> list[str]:
    output = io.StringIO()
    run_engine(io.StringIO(text), output)
    return output.getvalue().splitlines()


def test_each_request_gets_one_legal_move() -> None:
    lines = _run(
        "english B:W21-32:B1-12 movetime=20\n"
        "russian W:W21-32:B1-12 level=normal\n"
        "russian W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8 "
        "level=easy\n"
        "quit\n"
    )
    assert len(lines) == 3
    assert Position.initial("english").parse_move(lines[0])
    assert "-" in lines[1] and lines[1][0] in "aceg"
    assert Position.initial("russian").parse_move(lines[2])


def test_captures_are_written_with_every_landing_square() -> None:
    [line] = _run("english W:W27:B23,15,7 level=quick\n")
    assert line == "27x18x11x2"
    [line] = _run("russian W:Wc3:Bd4,f6 level=quick\n")
    assert line == "c3:e5:g7"


def test_a_bad_line_gets_an_error_and_the_engine_carries_on() -> None:
    lines = _run(
        "english\n"
        "klingon B:W21-32:B1-12\n"
        "english not-a-fen\n"
        "english B:W21-32:B1-12 movetime=fast\n"
        "english B:W21-32:B1-12 level=expert\n"
        "english B:W21-32:B1-12 movetime=5 movetime=6\n"
        "english W:W:B1\n"
        "english B:W21-32:B1-12 level=quick\n"
    )
    assert len(lines) == 8
    assert all(line.startswith("error: ") for line in lines[:7])
    assert "no legal move" in lines[6]
    assert Position.initial("english").parse_move(lines[7])


def test_quit_ends_the_engine_and_blank_lines_and_comments_are_ignored() -> None:
    lines = _run("\n# a comment\nenglish B:W21-32:B1-12 level=quick\nQUIT\nenglish B:W1:B32\n")
    assert len(lines) == 1


def test_a_request_parses_into_position_level_and_time() -> None:
    request = parse_request("Russian W:Wc3:Bd4,f6 level=EASY movetime=250")
    assert request.position.variant.name == "russian"
    assert request.level is Level.EASY
    assert request.movetime_ms == 250
    assert parse_request("checkers B:W21-32:B1-12").level is Level.HARD
    assert parse_request("english B:W21-32:B1-12 level=Master").level is Level.MASTER
    with pytest.raises(ValueError):
        parse_request("english B:W21-32:B1-12 level=hard extra")


def test_moves_are_played_from_the_fen_before_the_engine_chooses() -> None:
    # After 10-14 23-18 Black's only legal move is the capture 14x23; from the FEN's own
    # position (the start) no capture is possible at all.
    start = "english B:W21-32:B1-12 level=quick"
    assert "x" not in answer(start)
    assert answer(f"{start} moves=10-14,23-18") == "14x23"
    assert parse_request(f"{start} moves=10-14,23-18").moves == ("10-14", "23-18")


def test_moves_let_the_engine_see_a_threefold_repetition() -> None:
    # Two kings step out and back twice: the FEN alone is a fresh position, the game shows
    # its third occurrence, a draw.
    start = "english W:WK1:BK32 level=quick"
    assert not answer(start).startswith("error")
    shuffle = "1-5,32-28,5-1,28-32,1-5,32-28,5-1,28-32"
    assert answer(f"{start} moves={shuffle}") == (
        "error: no move to play: the game is drawn (threefold repetition)"
    )


def test_a_move_that_cannot_be_played_is_named() -> None:
    start = "english B:W21-32:B1-12 level=quick"
    reply = answer(f"{start} moves=11-15,23-29")
    assert reply.startswith("error: move 2 (23-29) cannot be played: ")
    assert answer(f"{start} moves=11-15,,23-19").startswith("error: moves must be moves")
    drawn = "english W:WK1:BK32 moves=1-5,32-28,5-1,28-32,1-5,32-28,5-1,28-32,1-5"
    assert answer(drawn) == "error: move 9 (1-5) cannot be played: the game is over"


def _bench_match() -> ModuleType:
    """``bench/match.py``, a script rather than a package module, loaded from its file."""
    spec = importlib.util.spec_from_file_location("bench_match", REPOSITORY / "bench/match.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def test_a_match_sends_the_engine_the_game_or_the_position_alone() -> None:
    engine_player = _bench_match().EnginePlayer
    game = Game("english")
    game.play("10-14")
    game.play("23-18")
    seeing = engine_player("goti engine", 150, sees_game=True)
    assert seeing.request_line(game) == "english B:W21-32:B1-12 movetime=150 moves=10-14,23-18"
    assert answer(seeing.request_line(game)) == "14x23"
    blind = engine_player("goti engine", None)
    assert blind.request_line(game) == f"english {game.position.fen()}"
    assert seeing.request_line(Game("english")) == "english B:W21-32:B1-12 movetime=150"


def test_answer_never_raises() -> None:
    for line in ["", "x", "english B:W21-32:B1-12 movetime=0", "russian W:Wz9:B1"]:
        assert answer(line).startswith("error: ")


REPOSITORY = Path(__file__).resolve().parents[2]
BASELINE = "bench.engines.baseline_2026_12"
"""The frozen copy of Goti's engine that ``bench/match.py`` measures a new Hard against."""


@pytest.mark.parametrize("module", ["goti.ai.engine", BASELINE])
def test_the_engine_over_real_pipes(module: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", module],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        cwd=REPOSITORY,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        for variant in ("english", "russian"):
            position = Position.initial(variant)
            for _ in range(4):
                process.stdin.write(f"{variant} {position.fen()} movetime=20\n")
                process.stdin.flush()
                reply = process.stdout.readline().strip()
                position = position.push(position.parse_move(reply))
        process.stdin.write("english B:W21-32:B1-12 level=nonsense\n")
        process.stdin.flush()
        assert process.stdout.readline().startswith("error: ")
        process.stdin.write("quit\n")
        process.stdin.flush()
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_the_baseline_stands_apart_from_goti() -> None:
    """Changes to Goti's search or rules must not reach the baseline: it loads no goti module."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, {BASELINE}.engine; "
            "print(sorted(name for name in sys.modules if name.split('.')[0] == 'goti'))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPOSITORY,
    )
    assert loaded.stdout.strip() == "[]"


def test_main_serves_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    output = io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO("english B:W21-32:B1-12 level=quick\n"))
    monkeypatch.setattr(sys, "stdout", output)
    assert main() == 0
    assert len(output.getvalue().splitlines()) == 1
