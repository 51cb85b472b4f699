"""Structured logs and the event loop the harness runs on."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from goti import serving
from goti.settings import Settings

log = logging.getLogger("goti.test.logs")


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    """Where the configured logs go; the root logger is put back as it was afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield io.StringIO()
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)
        logging.captureWarnings(False)


def test_json_logs_are_one_object_a_line_with_the_extra_fields(stream: io.StringIO) -> None:
    serving.configure_logging(Settings(log_format="json"), stream)
    log.info("table %s created", "T1", extra={"table_id": "T1", "seats": 2, "level": "shadowed"})
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("could not seat the player")

    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    created, failed = (json.loads(line) for line in lines)
    assert list(created)[:4] == ["time", "level", "logger", "message"]
    assert created["message"] == "table T1 created"
    assert created["level"] == "info"  # the record's own fields win over extras
    assert created["logger"] == "goti.test.logs"
    assert created["table_id"] == "T1"
    assert created["seats"] == 2
    assert created["time"].endswith("Z")
    assert failed["level"] == "error"
    assert "ValueError: boom" in failed["exception"]


def test_text_logs_are_for_people(stream: io.StringIO) -> None:
    serving.configure_logging(Settings(log_format="text", log_level="warning"), stream)
    log.info("not shown")
    log.warning("seat %d taken", 2, extra={"table_id": "T1"})
    (line,) = stream.getvalue().splitlines()
    assert line.endswith("WARNING goti.test.logs: seat 2 taken [table_id=T1]")


def test_auto_format_is_json_when_not_on_a_terminal(stream: io.StringIO) -> None:
    serving.configure_logging(Settings(log_format="auto"), stream)
    log.warning("hello")
    assert json.loads(stream.getvalue())["message"] == "hello"


def test_configuring_again_replaces_the_handler(stream: io.StringIO) -> None:
    serving.configure_logging(Settings(log_format="json"), io.StringIO())
    serving.configure_logging(Settings(log_format="json", log_level="debug"), stream)
    log.debug("once")
    assert len(stream.getvalue().splitlines()) == 1
    assert logging.getLogger().level == logging.DEBUG


def test_services_run_on_uvloop() -> None:
    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert serving.run(loop_module).startswith("uvloop")
