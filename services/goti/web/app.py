"""The web port's ASGI application: the tables, players and matchmaking services over Connect
and gRPC-Web, and the page that plays through them.

Paths of the API (``/goti.api.v1.TablesService/Play``) go to Connect; ``/``, ``/lobby``,
``/leaderboard``, ``/join/CODE`` and ``/table/ID`` serve the page, which reads its path to
open the lobby or the leaderboard, join a table or show one; the page's own files are served
from the Python package, read once at start.  The page calls the API from its own origin, so
browsers need no CORS; other origins are let in only when the operator names them
(``GOTI_WEB_ALLOWED_ORIGINS``).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from connectrpc.compression.gzip import GzipCompression
from connectrpc.server import ConnectASGIApplication

from goti.web.adapter import GotiEndpoint, goti_codecs

Scope: TypeAlias = MutableMapping[str, Any]
Message: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
Headers: TypeAlias = list[tuple[bytes, bytes]]

STATIC_PACKAGE: Final = "goti.web"
STATIC_FOLDER: Final = "static"
PAGE_FILE: Final = "index.html"
PAGE_ROUTES: Final = ("/join/", "/table/")
"""Path prefixes that open the page on one table: its join code or its id follows."""
PAGE_PATHS: Final = frozenset({"/", "/lobby", "/leaderboard", "/index.html"})

_CONTENT_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}
_COMPRESSED_ALREADY: Final = frozenset({".woff2"})
"""Files that gzip would only make bigger (a WOFF2 font is Brotli inside)."""
_COMPRESSIBLE_BYTES: Final = 1024

_PAGE_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

# What a browser on another origin may send and read (Connect, gRPC-Web and Goti's token).
_CORS_REQUEST_HEADERS: Final = (
    "authorization, content-type, connect-protocol-version, connect-timeout-ms, "
    "connect-accept-encoding, connect-content-encoding, grpc-timeout, x-grpc-web, x-user-agent"
)
_CORS_RESPONSE_HEADERS: Final = "grpc-status, grpc-message, grpc-status-details-bin"
_CORS_MAX_AGE_SECONDS: Final = 7200


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file of the page, ready to send."""

    body: bytes
    gzipped: bytes | None
    """The body gzip-compressed, when that is worth it."""
    content_type: str
    etag: bytes

    @classmethod
    def of(cls, name: str, body: bytes) -> StaticFile:
        suffix = name[name.rfind(".") :] if "." in name else ""
        content_type = _CONTENT_TYPES.get(suffix, "application/octet-stream")
        gzipped = None
        compressible = suffix in _CONTENT_TYPES and suffix not in _COMPRESSED_ALREADY
        if len(body) >= _COMPRESSIBLE_BYTES and compressible:
            # mtime=0: the same file always compresses to the same bytes.
            gzipped = gzip.compress(body, compresslevel=9, mtime=0)
        etag = b'"' + hashlib.sha256(body).hexdigest()[:32].encode() + b'"'
        return cls(body, gzipped, content_type, etag)


def packaged_page() -> dict[str, StaticFile]:
    """The page's files shipped in the ``goti.web`` package, by name."""
    folder = importlib.resources.files(STATIC_PACKAGE).joinpath(STATIC_FOLDER)
    return {
        entry.name: StaticFile.of(entry.name, entry.read_bytes())
        for entry in folder.iterdir()
        if entry.is_file() and not entry.name.startswith(".")
    }


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


async def _respond(
    send: Send, status: int, headers: Headers, body: bytes = b"", *, head: bool = False
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


class PageFiles:
    """Serves the page: its files by name, and the page itself on the paths it handles."""

    def __init__(self, files: Mapping[str, StaticFile]) -> None:
        if PAGE_FILE not in files:
            raise ValueError(f"the web page has no {PAGE_FILE}: build it (make web)")
        self._files = dict(files)

    def find(self, path: str) -> tuple[str, StaticFile] | None:
        """The file a GET of ``path`` answers with, and its name."""
        if path in PAGE_PATHS or any(
            path.startswith(prefix) and len(path) > len(prefix) for prefix in PAGE_ROUTES
        ):
            return PAGE_FILE, self._files[PAGE_FILE]
        name = path.removeprefix("/")
        found = self._files.get(name) if "/" not in name else None
        return (name, found) if found is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await _respond(
                send, 405, [(b"allow", b"GET, HEAD"), (b"content-type", b"text/plain")], b""
            )
            return
        found = self.find(scope["path"])
        if found is None:
            await _respond(
                send, 404, [(b"content-type", b"text/plain; charset=utf-8")], b"not found\n"
            )
            return
        name, file = found
        headers: Headers = [
            (b"etag", file.etag),
            # Revalidate every time: a new release changes the page under the same names.
            (b"cache-control", b"no-cache"),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"vary", b"accept-encoding"),
        ]
        if name == PAGE_FILE:
            headers.append((b"content-security-policy", _PAGE_POLICY.encode()))
        if _header(scope, b"if-none-match") == file.etag:
            await _respond(send, 304, headers)
            return
        body = file.body
        accepted = _header(scope, b"accept-encoding") or b""
        if file.gzipped is not None and b"gzip" in accepted:
            body = file.gzipped
            headers.append((b"content-encoding", b"gzip"))
        headers += [
            (b"content-type", file.content_type.encode()),
            (b"content-length", str(len(body)).encode()),
        ]
        await _respond(send, 200, headers, body, head=method == "HEAD")


def _as_given(endpoints: Mapping[str, GotiEndpoint]) -> Any:
    # Connect resolves its endpoints from the service object; here they are that object.
    return endpoints


class GotiConnectApplication(ConnectASGIApplication[Mapping[str, GotiEndpoint]]):
    """Connect, gRPC and gRPC-Web for a fixed set of endpoints."""

    def __init__(self, endpoints: Mapping[str, GotiEndpoint], *, read_max_bytes: int) -> None:
        super().__init__(
            service=endpoints,
            endpoints=_as_given,
            read_max_bytes=read_max_bytes,
            # Other Connect clients send gzip by default, so it is understood; Goti's messages
            # are small, so the fastest level is enough when a client asks for it back.
            compressions=(GzipCompression(level=1),),
            codecs=goti_codecs(),
        )

    @property
    def path(self) -> str:
        """The path prefix common to every endpoint."""
        return "/goti.api.v1."


class CrossOrigins:
    """Which other web origins may call the API from a browser."""

    def __init__(self, origins: Iterable[str]) -> None:
        self._origins = frozenset(origin.rstrip("/").encode() for origin in origins)
        self._anyone = b"*" in self._origins

    def allows(self, origin: bytes | None) -> bool:
        """Whether a page from ``origin`` may call the API."""
        return origin is not None and (self._anyone or origin in self._origins)

    async def preflight(self, scope: Scope, send: Send) -> None:
        """Answer a browser asking whether it may call the API from another origin."""
        origin = _header(scope, b"origin")
        headers: Headers = [(b"vary", b"origin")]
        if self.allows(origin):
            assert origin is not None
            headers += [
                (b"access-control-allow-origin", origin),
                (b"access-control-allow-methods", b"POST, GET"),
                (b"access-control-allow-headers", _CORS_REQUEST_HEADERS.encode()),
                (b"access-control-max-age", str(_CORS_MAX_AGE_SECONDS).encode()),
            ]
        await _respond(send, 204, headers)

    def sender(self, scope: Scope, send: Send) -> Send:
        """``send``, adding the headers that let an allowed origin read the response."""
        origin = _header(scope, b"origin")
        if not self.allows(origin):
            return send
        assert origin is not None
        extra: Headers = [
            (b"access-control-allow-origin", origin),
            (b"access-control-expose-headers", _CORS_RESPONSE_HEADERS.encode()),
            (b"vary", b"origin"),
        ]

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        return send_with_cors


class WebApplication:
    """What the web port serves: the API over Connect and gRPC-Web, and the page."""

    def __init__(
        self,
        endpoints: Mapping[str, GotiEndpoint],
        page: PageFiles,
        *,
        read_max_bytes: int,
        allowed_origins: Iterable[str] = (),
    ) -> None:
        self._api = GotiConnectApplication(endpoints, read_max_bytes=read_max_bytes)
        self._api_paths = frozenset(endpoints)
        self._page = page
        self._cross_origins = CrossOrigins(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope["path"] in self._api_paths:
            if scope["method"] == "OPTIONS":
                await self._cross_origins.preflight(scope, send)
                return
            await self._api(scope, receive, self._cross_origins.sender(scope, send))
            return
        await self._page(scope, receive, send)


async def _lifespan(receive: Receive, send: Send) -> None:
    # Everything the application needs is built before the server starts.
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
