"""The ``goti engine`` line protocol, in process and over real pipes."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from goti.ai.engine import answer, main, parse_request, run_engine
from goti.ai.levels import Level
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
