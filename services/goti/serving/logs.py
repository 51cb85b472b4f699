"""Structured logs: JSON lines for machines, ``key=value`` extras for people at a terminal."""

from __future__ import annotations

import datetime
import json
import logging
import sys
from typing import IO, Final

from goti.settings import Settings

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_RECORD_ATTRIBUTES: Final = frozenset(logging.makeLogRecord({}).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


def _extra_fields(record: logging.LogRecord) -> dict[str, object]:
    return {
        key: value
        for key, value in record.__dict__.items()
        if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
    }


class JsonLogFormatter(logging.Formatter):
    """One JSON object a line: time (UTC), level, logger, message, then the ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.datetime.fromtimestamp(record.created, datetime.UTC)
        entry: dict[str, object] = {
            "time": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in _extra_fields(record).items():
            entry.setdefault(key, value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextLogFormatter(logging.Formatter):
    """For people at a terminal: time, level, logger, message, then ``key=value`` extras."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        extras = _extra_fields(record)
        if not extras:
            return text
        first_line, newline, rest = text.partition("\n")
        pairs = " ".join(f"{key}={value}" for key, value in extras.items())
        return f"{first_line} [{pairs}]{newline}{rest}"


class _GotiLogHandler(logging.StreamHandler[IO[str]]):
    """Marks the handler Goti installed, so configuring again replaces it."""


def configure_logging(settings: Settings, stream: IO[str] | None = None) -> None:
    """Send every log record (Goti's, gRPC's, warnings) to ``stream`` (stderr), formatted as
    ``GOTI_LOG_FORMAT`` says, from ``GOTI_LOG_LEVEL`` up. Calling it again reconfigures."""
    stream = sys.stderr if stream is None else stream
    log_format = settings.log_format
    if log_format == "auto":
        log_format = "text" if stream.isatty() else "json"
    handler = _GotiLogHandler(stream)
    handler.setFormatter(JsonLogFormatter() if log_format == "json" else TextLogFormatter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _GotiLogHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log_level.upper())
    logging.captureWarnings(True)
