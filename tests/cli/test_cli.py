"""The ``goti`` command line, run as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def goti(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "goti.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_perft_json_reports_the_published_count() -> None:
    result = goti("perft", "--variant", "russian", "--depth", "5", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"variant", "fen", "depth", "nodes", "seconds", "nodes_per_second"}
    assert report["variant"] == "russian"
    assert report["depth"] == 5
    assert report["nodes"] == 7482


def test_perft_unique_and_divide() -> None:
    result = goti(
        "perft", "--fen", "W:WK30:B17,18,25,26", "--depth", "1", "--unique", "--divide", "--json"
    )
    report = json.loads(result.stdout)
    assert report["nodes"] == 1
    assert sum(report["divide"].values()) == 1


def test_moves_json_lists_paths_captures_and_the_position_after() -> None:
    result = goti("moves", "--variant", "english", "--fen", "B:W26,27:B22", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["side_to_move"] == "black"
    assert report["must_capture"] == [22]
    assert report["moves"] == [
        {
            "notation": "22x31",
            "path": [22, 31],
            "captured": [26],
            "crowned": True,
            "fen_after": "W:W27:BK31",
        }
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("perft", "--depth", "x"),
        ("perft", "--variant", "chess", "--depth", "2"),
        ("moves", "--fen", "W:W33:B1"),
        ("moves",),
        ("no-such-command",),
        (),
    ],
)
def test_bad_arguments_give_one_line_and_status_2(args: tuple[str, ...]) -> None:
    result = goti(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("goti: error:")
    assert "Traceback" not in result.stderr


def test_goti_engine_answers_each_position_with_a_move() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "goti.cli", "engine"],
        input="\n".join(
            ["english B:W21-32:B1-12 level=quick", "russian W:Wc3:Bd4,f6 movetime=50", "chess x"]
        )
        + "\nquit\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    first, second, third = result.stdout.splitlines()
    assert first in {"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}
    assert second == "c3:e5:g7"
    assert third.startswith("error: ")


@pytest.mark.parametrize("output", [(), ("--json",)])
def test_moves_into_a_pipe_whose_reader_has_gone_ends_quietly(output: tuple[str, ...]) -> None:
    # As `goti moves --json | head` once head has read its fill: the read end is closed.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "goti.cli", "moves", "--fen", "B:W21-32:B1-12", *output],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 141
