"""``goti serve`` with the web page: its address printed with the others, served by the tables
process, and join links that open it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
from service_ports import service_ports

from goti.backend import backend_settings, child_environment, page_address
from goti.settings import Settings

START_SECONDS = 90.0
STOP_SECONDS = 60.0


def test_goti_serve_serves_the_page_on_8080_unless_told_otherwise() -> None:
    unset = child_environment(backend_settings({}), "redis://localhost:1/0", {})
    assert unset["GOTI_WEB_PORT"] == "8080"
    assert unset["GOTI_JOIN_BASE_URL"] == "http://localhost:8080/join/"
    assert page_address(backend_settings({}).web_port) == "http://localhost:8080/"

    port_only = {"GOTI_WEB_PORT": "8123"}
    environment = child_environment(backend_settings(port_only), "redis://localhost:1/0", {})
    assert environment["GOTI_JOIN_BASE_URL"] == "http://localhost:8123/join/"

    chosen = {"GOTI_WEB_PORT": "8123", "GOTI_JOIN_BASE_URL": "https://goti.example/join/"}
    environment = child_environment(backend_settings(chosen), "redis://localhost:1/0", chosen)
    assert environment["GOTI_WEB_PORT"] == "8123"
    assert environment["GOTI_JOIN_BASE_URL"] == "https://goti.example/join/"
    # The mobile app's own links, though they are the default, are the operator's choice.
    app_links = {"GOTI_JOIN_BASE_URL": Settings().join_base_url}
    assert backend_settings(app_links).join_base_url == Settings().join_base_url

    off = {"GOTI_WEB_PORT": "0"}
    assert backend_settings(off).web_port == 0
    assert page_address(0) is None
    environment = child_environment(backend_settings(off), "redis://localhost:1/0", off)
    assert environment["GOTI_WEB_PORT"] == "0"
    # Without the page, the join links are the ones a lone tables service makes.
    assert Settings.from_env(environment).join_base_url == Settings().join_base_url


def _post_json(url: str, body: dict[str, object], token: str = "") -> dict[str, object]:
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, object] = json.loads(response.read())
        return answer


def test_goti_serve_prints_and_serves_the_page(tmp_path: Path) -> None:
    # Not ports the embedded Redis, which asks the OS for one, could be given.
    tables, referee, ai, web = service_ports(4)
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GOTI_")},
        "GOTI_TABLES_PORT": str(tables),
        "GOTI_REFEREE_PORT": str(referee),
        "GOTI_AI_PORT": str(ai),
        "GOTI_WEB_PORT": str(web),
        "GOTI_DATA_DIR": str(tmp_path / "data"),
        "GOTI_AI_WORKERS": "1",
        "GOTI_LOG_LEVEL": "warning",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "goti.cli", "serve"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            output.append(line)
            if line.startswith("  Stop:"):
                break
        page = f"http://localhost:{web}/"
        assert f"  Play in a browser:   {page}\n" in output, "".join(output)
        with urllib.request.urlopen(page, timeout=30) as response:
            assert b'<div id="goti">' in response.read()
        api = f"{page}goti.api.v1."
        guest = _post_json(api + "PlayersService/CreateGuest", {})
        token = str(guest["playerToken"])
        created = _post_json(
            api + "TablesService/CreateTable",
            {"requestId": "serve-1", "opponent": "OPPONENT_HUMAN"},
            token,
        )
        table = created["table"]
        assert isinstance(table, dict)
        assert table["joinUrl"] == f"{page}join/{table['code']}"
        tables_process = [
            child
            for child in psutil.Process(process.pid).children(recursive=True)
            if "goti.tables" in " ".join(child.cmdline())
        ]
        assert len(tables_process) == 1
        listening = {
            connection.laddr.port
            for connection in tables_process[0].net_connections(kind="tcp")
            if connection.status == psutil.CONN_LISTEN
        }
        assert {tables, web} <= listening
    except Exception as error:
        raise AssertionError(f"{error}\ngoti serve said:\n{''.join(output)}") from error
    finally:
        process.send_signal(signal.SIGINT)
        status = process.wait(STOP_SECONDS)
        assert process.stdout is not None
        output.extend(process.stdout.readlines())
        process.stdout.close()
    assert status == 0, "".join(output)
