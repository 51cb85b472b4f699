"""The web port besides the API: the page and its files from the Python package, the paths
that open the page, caching and compression, the cross-origin rules, undecodable requests,
and stopping with streams open."""

from __future__ import annotations

import asyncio
import gzip
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType

from goti.api.v1 import tables_pb2
from goti.settings import Settings
from goti.web.adapter import goti_endpoints
from goti.web.app import PageFiles, StaticFile, WebApplication, packaged_page
from goti.web.server import WebServer

from .conftest import WebBackend
from .test_web_api import browser_calls, reason_of


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def _lowered(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers}


def _fetch(url: str, method: str, headers: dict[str, str], body: bytes | None) -> Answer:
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return Answer(response.status, _lowered(response.headers.items()), response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, _lowered(error.headers.items()), error.read())


async def fetch(
    url: str, method: str = "GET", headers: dict[str, str] | None = None, body: bytes | None = None
) -> Answer:
    return await asyncio.to_thread(_fetch, url, method, headers or {}, body)


async def test_the_page_opens_on_its_paths(web_backend: WebBackend) -> None:
    page = await fetch(web_backend.url)
    assert page.status == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert b'<div id="goti">' in page.body
    assert "script-src 'self'" in page.headers["content-security-policy"]
    for path in ("lobby", "leaderboard", "join/K7QX2M", "table/abc-DEF_123"):
        opened = await fetch(web_backend.url + path)
        assert opened.status == 200, path
        assert opened.body == page.body
    for path in ("join/", "nowhere", "static/../index.html", "goti.api.v1.TablesService/Nope"):
        assert (await fetch(web_backend.url + path)).status == 404, path
    assert (await fetch(web_backend.url, method="POST", body=b"")).status == 405


async def test_the_bundle_is_compressed_and_revalidated(web_backend: WebBackend) -> None:
    plain = await fetch(web_backend.url + "app.js")
    assert plain.status == 200
    assert plain.headers["content-type"].startswith("text/javascript")
    assert plain.headers["cache-control"] == "no-cache"
    zipped = await fetch(web_backend.url + "app.js", headers={"accept-encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert gzip.decompress(zipped.body) == plain.body
    assert len(zipped.body) < len(plain.body) / 2
    etag = plain.headers["etag"]
    again = await fetch(web_backend.url + "app.js", headers={"if-none-match": etag})
    assert again.status == 304
    assert again.body == b""
    head = await fetch(web_backend.url + "app.css", method="HEAD")
    assert head.status == 200
    assert head.body == b""


async def test_undecodable_bytes_are_an_invalid_request(web_backend: WebBackend) -> None:
    answer = await fetch(
        web_backend.url + "goti.api.v1.TablesService/GetTable",
        method="POST",
        headers={"content-type": "application/proto"},
        body=b"\x0a\xff",
    )
    assert answer.status == 400
    assert b'"code": "invalid_argument"' in answer.body
    assert b"GetTableRequest" in answer.body


async def test_only_the_page_itself_may_call_unless_origins_are_allowed(
    web_backend: WebBackend,
) -> None:
    preflight = {
        "origin": "https://elsewhere.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
    }
    path = web_backend.url + "goti.api.v1.TablesService/GetTable"
    refused = await fetch(path, method="OPTIONS", headers=preflight)
    assert refused.status == 204
    assert "access-control-allow-origin" not in refused.headers

    settings = Settings(host="127.0.0.1", web_allowed_origins=("https://elsewhere.example",))
    application = WebApplication(
        goti_endpoints(
            web_backend.runtime.tables_servicer,
            web_backend.runtime.players_servicer,
            web_backend.runtime.matchmaking_servicer,
        ),
        PageFiles(packaged_page()),
        read_max_bytes=settings.max_message_bytes,
        allowed_origins=settings.web_allowed_origins,
    )
    server = await WebServer.start(application, host="127.0.0.1", port=0, grace_seconds=1)
    try:
        other = f"http://127.0.0.1:{server.port}/goti.api.v1.TablesService/GetTable"
        allowed = await fetch(other, method="OPTIONS", headers=preflight)
        assert allowed.headers["access-control-allow-origin"] == "https://elsewhere.example"
        assert "authorization" in allowed.headers["access-control-allow-headers"]
        call = await fetch(
            other,
            method="POST",
            headers={"origin": "https://elsewhere.example", "content-type": "application/json"},
            body=b'{"tableId": "missing"}',
        )
        assert call.status == 404
        assert call.headers["access-control-allow-origin"] == "https://elsewhere.example"
        assert "grpc-status-details-bin" in call.headers["access-control-expose-headers"]
    finally:
        await server.stop()


async def test_draining_ends_web_streams_so_browsers_reconnect(web_backend: WebBackend) -> None:
    async with browser_calls(web_backend, ProtocolType.CONNECT) as calls:
        await calls.sign_in()
        created = await calls.call(
            "CreateTable",
            tables_pb2.CreateTableRequest(
                request_id="drain-1", opponent=tables_pb2.OPPONENT_PASS_AND_PLAY
            ),
        )
        stream = calls.watch_table(created.table.table_id)
        assert (await anext(stream)).WhichOneof("message") == "snapshot"
        web_backend.web.stop_accepting()
        await web_backend.runtime.drain()
        with pytest.raises(ConnectError) as ended:
            while True:
                message = await asyncio.wait_for(anext(stream), 30)
                assert message.WhichOneof("message") == "heartbeat"
        assert ended.value.code is Code.UNAVAILABLE
        assert reason_of(ended.value)[0] == "BACKEND_UNAVAILABLE"
        await asyncio.wait_for(web_backend.web.stop(), 10)


def test_a_page_without_its_html_is_refused() -> None:
    with pytest.raises(ValueError, match="build it"):
        PageFiles({"app.js": StaticFile.of("app.js", b"")})


async def test_the_devanagari_font_is_served_with_its_licence(web_backend: WebBackend) -> None:
    font = await fetch(
        web_backend.url + "noto-sans-devanagari-400.woff2", headers={"accept-encoding": "gzip"}
    )
    assert font.status == 200
    assert font.headers["content-type"] == "font/woff2"
    assert "content-encoding" not in font.headers, "WOFF2 is compressed already"
    assert font.body[:4] == b"wOF2"
    licence = await fetch(web_backend.url + "noto-sans-devanagari-OFL.txt")
    assert licence.headers["content-type"] == "text/plain; charset=utf-8"
    assert b"SIL Open Font License, Version 1.1" in licence.body
    styles = await fetch(web_backend.url + "app.css")
    assert b"url(/noto-sans-devanagari-400.woff2)" in styles.body
