"""The examples in clients/examples run as a developer would run them, against a real
backend, and each finishes a whole game against the computer."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "clients" / "examples"
GAME_SECONDS = 100.0
"""A game against Easy takes seconds; a busy machine may take many more."""
SDK_LINES_LIMIT = 50


async def run_example(name: str, target: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLES / name),
        "--server",
        target,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), GAME_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, stderr.decode()
    return stdout.decode()


def code_lines(path: Path) -> int:
    """Lines that are neither blank, comments nor the module docstring."""
    text = path.read_text(encoding="utf-8")
    body = text.split('"""', 2)[2]
    return sum(1 for line in body.splitlines() if line.strip() and not line.strip().startswith("#"))


def finished_game(output: str) -> None:
    assert "result " in output
    result = output.split("result ", 1)[1].split(maxsplit=1)[0]
    assert result in ("1-0", "0-1", "1/2-1/2")
    # The PDN printed at the end carries the same result.
    assert '[Result "' + result + '"]' in output
    assert '[GameType "21,' in output


@pytest.mark.timeout(GAME_SECONDS + 30)
async def test_the_sdk_bot_finishes_a_game_against_the_computer(goti_target: str) -> None:
    output = await run_example("bot.py", goti_target)
    finished_game(output)
    assert "  1. " in output


@pytest.mark.timeout(GAME_SECONDS + 30)
async def test_the_raw_stubs_flow_finishes_a_game_against_the_computer(goti_target: str) -> None:
    output = await run_example("raw_stubs.py", goti_target)
    finished_game(output)
    assert "refused" not in output


def test_the_bot_is_under_fifty_lines_of_code() -> None:
    assert code_lines(EXAMPLES / "bot.py") < SDK_LINES_LIMIT
