"""``goti serve``: argument and configuration errors, and its help (the service itself runs in
tests/referee)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def goti(*args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("GOTI_")}
    return subprocess.run(
        [sys.executable, "-m", "goti.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**env, **environment},
    )


@pytest.mark.parametrize(
    "args",
    [
        ("serve", "umpire"),
        ("serve", "referee", "--port"),
        ("serve", "referee", "--port", "x"),
        ("serve", "referee", "--port", "70000"),
        ("serve", "referee", "--port", "-1"),
        ("serve", "referee", "--port", "\u00b2"),
        ("serve", "referee", "now"),
    ],
)
def test_bad_serve_arguments_give_one_line_and_status_2(args: tuple[str, ...]) -> None:
    result = goti(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("goti: error:")


def test_bad_configuration_names_the_variable_and_exits_2() -> None:
    result = goti("serve", "referee", GOTI_REFEREE_PORT="abc", GOTI_GRACE_SECONDS="-1")
    assert result.returncode == 2
    assert "GOTI_REFEREE_PORT must be a port number 1-65535, got 'abc'" in result.stderr
    assert "GOTI_GRACE_SECONDS must be a number of seconds, 0 or more, got '-1'" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_help_lists_the_services_and_every_setting() -> None:
    result = goti("serve", "--help")
    assert result.returncode == 0
    usage = result.stdout.splitlines()[0]
    assert "referee" in usage.rpartition("{")[2]
    assert "--port PORT" in result.stdout
    for variable in ("GOTI_REFEREE_PORT", "GOTI_GRACE_SECONDS", "GOTI_LOG_FORMAT"):
        assert variable in result.stdout
