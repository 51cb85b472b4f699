"""docs/integration.md stays true to the contract: every error reason is in its table, the
buf.gen.yaml examples are valid YAML for buf v2, and the connection numbers match what Goti's
servers and SDK use."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from goti.api.v1 import errors_pb2
from goti.settings import Settings
from goti_client import connection

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "integration.md"
REASON_PREFIX = "ERROR_REASON_"


def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def test_every_error_reason_has_a_row() -> None:
    rows = set(re.findall(r"^\| `([A-Z_]+)` \|", guide(), flags=re.MULTILINE))
    reasons = {
        name.removeprefix(REASON_PREFIX)
        for name in (value.name for value in errors_pb2.ErrorReason.DESCRIPTOR.values)
        if name != f"{REASON_PREFIX}UNSPECIFIED"
    }
    assert sorted(reasons - rows) == [], "reasons missing from the guide"
    assert sorted(rows - reasons) == [], "rows for reasons that do not exist"


def test_the_buf_templates_are_buf_v2_yaml() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", guide(), flags=re.DOTALL)
    assert len(blocks) == 2
    for block in blocks:
        template = yaml.safe_load(block)
        assert template["version"] == "v2"
        assert {"directory": "proto"} in template["inputs"]
        assert all("out" in plugin for plugin in template["plugins"])


def test_the_connection_numbers_are_the_ones_goti_uses() -> None:
    text = guide()
    settings = Settings()
    assert connection.KEEPALIVE_TIME_SECONDS == 30
    assert connection.KEEPALIVE_TIMEOUT_SECONDS == 10
    assert "every **30 s**" in text
    assert "| **10 s** |" in text
    assert f"every {settings.keepalive_time_seconds:g} s" in text
    assert f"| {settings.keepalive_timeout_seconds:g} s" in text
    assert f"| {settings.keepalive_min_ping_interval_seconds:g} s" in text
    assert f"about every {settings.heartbeat_seconds:g} s" in text
    assert connection.STREAM_BACKOFF.initial == 0.5
    assert connection.STREAM_BACKOFF.maximum == 30
    assert "0.5 s doubling to 30 s" in text
