"""How the tables service is tuned: the operator's settings plus the service's own knobs."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Final

from goti.settings import Settings
from goti.tables.recent import DEFAULT_TABLES_KEPT

MIN_TURN_TIMER_SECONDS: Final = 10
"""The shortest turn timer the contract lets a player choose."""
MAX_TURN_TIMER_SECONDS: Final = 86_400

_DEFAULTS: Final = Settings()
"""Where the options an operator sets take their defaults, so that each is written once, in
:class:`~goti.settings.Settings`."""


@dataclass(frozen=True, slots=True)
class TablesOptions:
    """Everything the tables service's parts are configured with.

    A field named as a :class:`~goti.settings.Settings` field is that ``GOTI_*`` setting,
    with its default; :meth:`from_settings` takes them all.  The rest are fixed for
    production and changed only by tests (a turn timer of a second, a quick timer poll).
    """

    join_base_url: str = _DEFAULTS.join_base_url
    finished_table_seconds: int = _DEFAULTS.finished_table_seconds
    waiting_table_seconds: int = _DEFAULTS.waiting_table_seconds
    idle_table_seconds: int = _DEFAULTS.idle_table_seconds
    """An unfinished table nobody has touched for this long is dropped."""
    heartbeat_seconds: float = _DEFAULTS.heartbeat_seconds
    joins_per_minute: int = _DEFAULTS.joins_per_minute
    tables_per_minute: int = _DEFAULTS.tables_per_minute
    seeks_per_minute: int = _DEFAULTS.seeks_per_minute
    seek_resume_seconds: int = _DEFAULTS.seek_resume_seconds
    seek_poll_seconds: float = 0.5
    """How often a waiting seek's stream looks at its pool and its own record (the fallback
    for a lost wake-up)."""
    seek_heartbeat_seconds: float = 5.0
    """The longest a waiting seek's stream goes without a message."""
    pairing_poll_seconds: float = 0.2
    """How often each replica pairs the pools it holds while someone waits in one."""
    pairing_idle_poll_seconds: float = 5.0
    """How often a replica looks at the pools while they are empty.  A seek entering through
    the replica wakes it at once; this catches seeks entered through replicas of an earlier
    version, which wake only themselves."""
    pairing_lease_seconds: float = 3.0
    """How long a replica holds a pool it pairs; a stopped replica's pools pass to another
    once it ends."""
    guests_per_minute: int = _DEFAULTS.guests_per_minute
    table_log_events: int = _DEFAULTS.table_log_events
    redis_wait_replicas: int = _DEFAULTS.redis_wait_replicas
    redis_wait_timeout_seconds: float = _DEFAULTS.redis_wait_timeout_seconds
    redis_shards: int = _DEFAULTS.redis_shards
    """Shards of the tables on a Redis Cluster (one Redis has one)."""
    min_turn_timer_seconds: int = MIN_TURN_TIMER_SECONDS
    timer_poll_seconds: float = 0.5
    """How often each replica looks for due timers."""
    timer_lease_seconds: float = 15.0
    """How long a claimed timer (a computer's turn, say) is held before another replica may
    take it over; longer than the slowest computer move."""
    timers_per_claim: int = 64
    referee_deadline_seconds: float = 3.0
    ai_deadline_seconds: float = 10.0
    quick_move_deadline_seconds: float = 2.0
    creation_memory_seconds: int = 3600
    """How long a CreateTable request id is remembered for retries."""
    lobby_snapshot_size: int = 200
    watcher_queue_size: int = 256
    """Events a slow watcher may fall behind before it is made to catch up from the log."""
    recent_tables_kept: int = DEFAULT_TABLES_KEPT
    """Tables whose last committed copy a replica keeps, so that a player's next command
    needs no read (0: read every table afresh)."""

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> TablesOptions:
        """The options for ``settings``, with ``overrides`` (field values) on top."""
        chosen = {name: getattr(settings, name) for name in FROM_SETTINGS}
        return cls(**{**chosen, **overrides})


FROM_SETTINGS: Final = frozenset(option.name for option in fields(TablesOptions)) & frozenset(
    setting.name for setting in fields(Settings)
)
"""The options that are ``GOTI_*`` settings."""
