"""Goti's configuration: every ``GOTI_*`` environment variable, its default and its meaning.

The composition root (a service's ``__main__`` or ``goti serve``) calls :meth:`Settings.from_env`
once at start and passes the result down; nothing reads the environment at import time. The
field declarations below are the single source of truth: :func:`variables` lists them for the
README table and ``--help`` text, so documentation cannot drift from the parser.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, Literal, TypeVar

from goti import setting_values as values
from goti.setting_values import IpNetwork, LogFormat

T = TypeVar("T")

ServiceName = Literal["tables", "referee", "ai"]
SERVICE_NAMES: Final[tuple[ServiceName, ...]] = ("tables", "referee", "ai")

PREFIX: Final = "GOTI_"
TEST_PREFIX: Final = "GOTI_TEST_"
"""Variables for Goti's own test suite, such as ``GOTI_TEST_REDIS_URL``; not settings."""


class SettingsError(ValueError):
    """One or more ``GOTI_*`` variables hold values Goti cannot use.

    The message has one line per problem, each naming its variable.
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class Variable:
    """One ``GOTI_*`` environment variable, as documented."""

    name: str
    default: str
    """The default as it would be written in the environment (empty: unset)."""
    description: str
    """One line for people."""


def _env(
    name: str,
    default: T,
    description: str,
    parse: Callable[[str], T],
    *,
    shown_default: str | None = None,
) -> T:
    """Declare a settings field read from the variable ``name``.

    ``shown_default`` is the default as documented, when ``str(default)`` would mislead.
    """
    shown = shown_default if shown_default is not None else str(default)
    metadata = {"variable": Variable(name, shown, description), "parse": parse}
    return field(default=default, metadata=metadata)


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a Goti process is configured with.

    ``Settings()`` holds the defaults; tests build one directly with the fields they change.
    """

    host: str = _env(
        "GOTI_HOST",
        "[::]",
        "Address the gRPC servers and metrics endpoints listen on ([::] is every interface)",
        values.host,
    )
    tables_port: int = _env(
        "GOTI_TABLES_PORT", 50051, "Port of the tables service, the public API", values.port
    )
    referee_port: int = _env("GOTI_REFEREE_PORT", 50052, "Port of the referee service", values.port)
    ai_port: int = _env("GOTI_AI_PORT", 50053, "Port of the AI service", values.port)
    web_port: int = _env(
        "GOTI_WEB_PORT",
        0,
        "Port of the web page, and of the public API over Connect and gRPC-Web, served by "
        "each tables process (0: off; goti serve uses 8080 when unset)",
        values.optional_port,
    )
    tables_metrics_port: int = _env(
        "GOTI_TABLES_METRICS_PORT",
        0,
        "Port of the tables service's Prometheus /metrics endpoint (0: off)",
        values.optional_port,
    )
    referee_metrics_port: int = _env(
        "GOTI_REFEREE_METRICS_PORT",
        0,
        "Port of the referee service's Prometheus /metrics endpoint (0: off)",
        values.optional_port,
    )
    ai_metrics_port: int = _env(
        "GOTI_AI_METRICS_PORT",
        0,
        "Port of the AI service's Prometheus /metrics endpoint (0: off)",
        values.optional_port,
    )
    referee_target: str = _env(
        "GOTI_REFEREE_TARGET",
        "",
        "Where the tables service reaches the referee, e.g. dns:///referee:50052",
        values.target,
        shown_default="localhost:$GOTI_REFEREE_PORT",
    )
    ai_target: str = _env(
        "GOTI_AI_TARGET",
        "",
        "Where the tables service reaches the AI; dns:///ai:50053 spreads calls over replicas",
        values.target,
        shown_default="localhost:$GOTI_AI_PORT",
    )
    redis_url: str = _env(
        "GOTI_REDIS_URL",
        "",
        "Redis holding live games: redis://, rediss://, unix://, redis+sentinel://HOST:PORT,"
        "HOST:PORT/SERVICE for the primary those sentinels name, or redis+cluster://HOST:PORT,"
        "HOST:PORT for a Redis Cluster; unset: goti serve starts an embedded Redis",
        values.redis_url,
    )
    redis_shards: int = _env(
        "GOTI_REDIS_SHARDS",
        16,
        "On a Redis Cluster, the shards (one hash slot each) the tables and their timers and "
        "lobby are spread over, 1-1024; fixed while any table exists (one Redis: always one)",
        values.shard_count,
    )
    redis_wait_replicas: int = _env(
        "GOTI_REDIS_WAIT_REPLICAS",
        0,
        "Replicas that must hold each change to a table before the player hears of it "
        "(Redis WAIT), so that a failover loses no acknowledged move (0: off)",
        values.count,
    )
    redis_wait_timeout_seconds: float = _env(
        "GOTI_REDIS_WAIT_TIMEOUT_SECONDS",
        0.5,
        "How long a change waits for those replicas; then the player is answered anyway (the "
        "change stands on the primary) and the shortfall is logged",
        values.positive_seconds,
    )
    data_dir: str = _env(
        "GOTI_DATA_DIR",
        "~/.local/share/goti",
        "Folder where goti serve keeps the embedded Redis's data, so games survive a restart",
        values.path,
    )
    ai_workers: int = _env(
        "GOTI_AI_WORKERS",
        0,
        "Search processes of one AI service (0: one per CPU core available)",
        values.count,
    )
    ai_search_memory_mb: int = _env(
        "GOTI_AI_SEARCH_MEMORY_MB",
        128,
        "Megabytes each search process of the AI service gives, when full, to the "
        "transposition tables it keeps from move to move (both variants together; a process "
        "takes about 60 MB more)",
        values.positive_count,
    )
    ai_master_endgames: str = _env(
        "GOTI_AI_MASTER_ENDGAMES",
        "",
        "Folder of larger endgame tables for Master alone, made by goti endgames build "
        "--pieces 5 --out FOLDER (each variant it holds a whole set of; the others, and the "
        "other levels, read the shipped four-piece tables): up to 139 MB more in each search "
        "process that plays Master, a variant; unset: Master reads the shipped tables too",
        values.path,
        shown_default="",
    )
    log_level: str = _env(
        "GOTI_LOG_LEVEL",
        "info",
        "Least severe log level written: " + ", ".join(values.LOG_LEVELS),
        values.log_level,
    )
    # _env returns a dataclasses.field, which ruff cannot see through for a Literal type.
    log_format: LogFormat = _env(  # noqa: RUF009
        "GOTI_LOG_FORMAT",
        "auto",
        "Logs as json (one object a line) or text; auto: text on a terminal, else json",
        values.log_format,
    )
    grace_seconds: float = _env(
        "GOTI_GRACE_SECONDS",
        5.0,
        "On SIGTERM, how long calls in flight may take to finish before they are cancelled",
        values.seconds,
        shown_default="5",
    )
    max_message_bytes: int = _env(
        "GOTI_MAX_MESSAGE_BYTES",
        1024 * 1024,
        "Largest gRPC message sent or received, in bytes",
        values.positive_count,
    )
    keepalive_time_seconds: float = _env(
        "GOTI_KEEPALIVE_TIME_SECONDS",
        60.0,
        "Idle time after which a server (or Goti's own client) pings the other end",
        values.positive_seconds,
        shown_default="60",
    )
    keepalive_timeout_seconds: float = _env(
        "GOTI_KEEPALIVE_TIMEOUT_SECONDS",
        20.0,
        "How long a ping may go unanswered before the connection is closed",
        values.positive_seconds,
        shown_default="20",
    )
    keepalive_min_ping_interval_seconds: float = _env(
        "GOTI_KEEPALIVE_MIN_PING_INTERVAL_SECONDS",
        20.0,
        "Shortest interval between client pings a server accepts; clients pinging faster "
        "are disconnected",
        values.positive_seconds,
        shown_default="20",
    )
    max_connection_age_seconds: float = _env(
        "GOTI_MAX_CONNECTION_AGE_SECONDS",
        0.0,
        "Close client connections after this long so they reconnect to new replicas (0: never)",
        values.seconds,
        shown_default="0",
    )
    max_pending_requests: int = _env(
        "GOTI_MAX_PENDING_REQUESTS",
        10_000,
        "Calls a server queues before it starts refusing new ones (bursts of reconnects)",
        values.positive_count,
    )
    max_concurrent_streams: int = _env(
        "GOTI_MAX_CONCURRENT_STREAMS",
        0,
        "Calls open at once on one client connection (0: no limit)",
        values.count,
    )

    join_base_url: str = _env(
        "GOTI_JOIN_BASE_URL",
        "goti://join/",
        "Start of the join link of every table; the table's code is appended to it",
        values.base_url,
    )
    web_allowed_origins: tuple[str, ...] = _env(
        "GOTI_WEB_ALLOWED_ORIGINS",
        (),
        "Other web origins whose pages may call the API from a browser, comma-separated "
        "(https://app.example); unset: only the page Goti serves",
        values.origins,
        shown_default="",
    )
    finished_table_seconds: int = _env(
        "GOTI_FINISHED_TABLE_SECONDS",
        86_400,
        "How long a finished table stays readable (record, PDN, rematch)",
        values.positive_count,
    )
    waiting_table_seconds: int = _env(
        "GOTI_WAITING_TABLE_SECONDS",
        86_400,
        "How long a table waits for its second player before it is cleared away",
        values.positive_count,
    )
    idle_table_seconds: int = _env(
        "GOTI_IDLE_TABLE_SECONDS",
        30 * 86_400,
        "How long an unfinished table nobody plays at is kept",
        values.positive_count,
    )
    heartbeat_seconds: float = _env(
        "GOTI_HEARTBEAT_SECONDS",
        15.0,
        "Idle time after which a watch stream gets a heartbeat",
        values.positive_seconds,
        shown_default="15",
    )
    # 16: eight moves each, so that even a game against the computer, whose every move answers
    # one, keeps the events of its last eight commands; the log then costs as much at the
    # hundredth move as at the tenth.
    table_log_events: int = _env(
        "GOTI_TABLE_LOG_EVENTS",
        16,
        "Latest events each table keeps in Redis: a watcher that missed no more gets just "
        "those, one further behind a snapshot; a retried command gets its events back while "
        "they are kept",
        values.positive_count,
    )
    joins_per_minute: int = _env(
        "GOTI_JOINS_PER_MINUTE",
        30,
        "Tables one player may join in a minute, and tables one player (or one address "
        "without a token) may look up by code, against guessing codes (0: no limit)",
        values.count,
    )
    tables_per_minute: int = _env(
        "GOTI_TABLES_PER_MINUTE",
        20,
        "Tables one player may create in a minute (0: no limit)",
        values.count,
    )
    seeks_per_minute: int = _env(
        "GOTI_SEEKS_PER_MINUTE",
        20,
        "Seeks (Play online now) one player may start in a minute; resuming one is free "
        "(0: no limit)",
        values.count,
    )
    seek_resume_seconds: int = _env(
        "GOTI_SEEK_RESUME_SECONDS",
        10,
        "How long a seek whose stream dropped may be resumed with its request_id, keeping "
        "the time it waited (it leaves the pool at once)",
        values.positive_count,
    )
    guests_per_minute: int = _env(
        "GOTI_GUESTS_PER_MINUTE",
        20,
        "Guest players one client address may create in a minute (0: no limit)",
        values.count,
    )
    idle_guest_days: int = _env(
        "GOTI_IDLE_GUEST_DAYS",
        180,
        "Days a guest player nobody uses is kept, with its streaks; then its token stops "
        "working (0: forever)",
        values.count,
    )
    trusted_proxies: tuple[IpNetwork, ...] = _env(
        "GOTI_TRUSTED_PROXIES",
        (),
        "Proxies (IP addresses or networks, comma-separated) whose X-Forwarded-For names the "
        "client, for the guest rate limit; unset: the direct peer is the client",
        values.networks,
        shown_default="",
    )

    def __post_init__(self) -> None:
        problems = self._inconsistencies()
        if problems:
            raise SettingsError(problems)

    def _inconsistencies(self) -> list[str]:
        problems = []
        if self.keepalive_time_seconds < self.keepalive_min_ping_interval_seconds:
            # Goti's own channels ping every keepalive_time; a server would disconnect them.
            problems.append(
                "GOTI_KEEPALIVE_TIME_SECONDS must be at least "
                "GOTI_KEEPALIVE_MIN_PING_INTERVAL_SECONDS, or Goti's own clients would be "
                f"disconnected for pinging too often; got {self.keepalive_time_seconds:g} and "
                f"{self.keepalive_min_ping_interval_seconds:g}"
            )
        grpc_ports = (self.tables_port, self.referee_port, self.ai_port)
        if self.web_port and self.web_port in grpc_ports:
            problems.append(
                f"GOTI_WEB_PORT must differ from the gRPC ports; got {self.web_port}, the port of "
                "a gRPC service"
            )
        return problems

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, unset: Mapping[str, str] | None = None
    ) -> Settings:
        """Read every ``GOTI_*`` variable (from ``os.environ`` unless given).

        Unset and empty variables take their text in ``unset`` (a composition root's own
        defaults, such as ``goti serve``'s web page on 8080), else their defaults. Raises
        :class:`SettingsError` naming every variable that cannot be used, e.g.
        ``GOTI_REFEREE_PORT must be a port number 1-65535, got 'abc'``.
        """
        env = os.environ if environ is None else environ
        instead = {} if unset is None else unset
        parsed: dict[str, Any] = {}
        problems: list[str] = []
        for settings_field in fields(cls):
            variable: Variable = settings_field.metadata["variable"]
            text = env.get(variable.name, "")
            if not text.strip():
                text = instead.get(variable.name, "")
            if not text.strip():
                continue
            try:
                parsed[settings_field.name] = settings_field.metadata["parse"](text)
            except values.ParseError as error:
                problems.append(f"{variable.name} must be {error}, got {text!r}")
        if problems:
            raise SettingsError(problems)
        return cls(**parsed)

    def port(self, service: ServiceName) -> int:
        """The gRPC port of one Goti service."""
        ports: dict[ServiceName, int] = {
            "tables": self.tables_port,
            "referee": self.referee_port,
            "ai": self.ai_port,
        }
        return ports[service]

    def metrics_port(self, service: ServiceName) -> int:
        """The /metrics port of one Goti service; 0 when it has none."""
        ports: dict[ServiceName, int] = {
            "tables": self.tables_metrics_port,
            "referee": self.referee_metrics_port,
            "ai": self.ai_metrics_port,
        }
        return ports[service]

    def target(self, service: ServiceName) -> str:
        """Where a client dials one Goti service: its ``GOTI_*_TARGET`` or this host's port."""
        configured: dict[ServiceName, str] = {
            "tables": "",
            "referee": self.referee_target,
            "ai": self.ai_target,
        }
        return configured[service] or f"localhost:{self.port(service)}"

    @property
    def ai_worker_count(self) -> int:
        """Search processes to start: ``ai_workers``, or one per CPU this process may use."""
        if self.ai_workers:
            return self.ai_workers
        try:
            return len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            return os.cpu_count() or 1


def variables() -> tuple[Variable, ...]:
    """Every ``GOTI_*`` variable Goti reads, in documentation order."""
    return tuple(settings_field.metadata["variable"] for settings_field in fields(Settings))


def markdown_table() -> str:
    """The README's configuration table."""
    rows = ["| Variable | Default | Meaning |", "| --- | --- | --- |"]
    for variable in variables():
        default = f"`{variable.default}`" if variable.default else "(unset)"
        rows.append(f"| `{variable.name}` | {default} | {variable.description} |")
    return "\n".join(rows) + "\n"


def help_text() -> str:
    """The environment section of ``goti serve --help``."""
    width = max(len(variable.name) for variable in variables())
    lines = ["environment variables (default in brackets):"]
    for variable in variables():
        default = variable.default or "unset"
        lines.append(f"  {variable.name:<{width}}  {variable.description} [{default}]")
    return "\n".join(lines) + "\n"


def unknown_variables(environ: Mapping[str, str] | None = None) -> list[str]:
    """``GOTI_*`` variables that are set but mean nothing to Goti, each with a likely fix.

    A typo such as ``GOTI_REFERE_PORT`` would otherwise be silently ignored.
    """
    env = os.environ if environ is None else environ
    known = [variable.name for variable in variables()]
    notes = []
    for name in sorted(env):
        if not name.startswith(PREFIX) or name.startswith(TEST_PREFIX) or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        notes.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return notes
