"""The ``goti engine`` line protocol, in process and over real pipes."""

from __future__ import annotations

import io
import subprocess
import sys

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
    with pytest.raises(ValueError):
        parse_request("english B:W21-32:B1-12 level=hard extra")


def test_answer_never_raises() -> None:
    for line in ["", "x", "english B:W21-32:B1-12 movetime=0", "russian W:Wz9:B1"]:
        assert answer(line).startswith("error: ")


def test_the_engine_over_real_pipes() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "goti.ai.engine"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        position = Position.initial("english")
        for _ in range(4):
            process.stdin.write(f"english {position.fen()} movetime=20\n")
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


def test_main_serves_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    output = io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO("english B:W21-32:B1-12 level=quick\n"))
    monkeypatch.setattr(sys, "stdout", output)
    assert main() == 0
    assert len(output.getvalue().splitlines()) == 1
