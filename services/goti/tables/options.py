"""How the tables service is tuned: the operator's settings plus the service's own knobs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final

from goti.settings import Settings
from goti.tables.recent import DEFAULT_TABLES_KEPT
from goti.tables.store import DEFAULT_LOG_LIMIT

MIN_TURN_TIMER_SECONDS: Final = 10
"""The shortest turn timer the contract lets a player choose."""
MAX_TURN_TIMER_SECONDS: Final = 86_400


@dataclass(frozen=True, slots=True)
class TablesOptions:
    """Everything the tables service's parts are configured with.

    :meth:`from_settings` takes the ``GOTI_*`` settings; the rest are fixed for production and
    changed only by tests (a turn timer of a second, a quick timer poll).
    """

    join_base_url: str = "goti://join/"
    finished_table_seconds: int = 86_400
    waiting_table_seconds: int = 86_400
    idle_table_seconds: int = 30 * 86_400
    """An unfinished table nobody has touched for this long is dropped."""
    heartbeat_seconds: float = 15.0
    joins_per_minute: int = 30
    tables_per_minute: int = 20
    guests_per_minute: int = 20
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
    log_limit: int = DEFAULT_LOG_LIMIT
    lobby_snapshot_size: int = 200
    watcher_queue_size: int = 256
    """Events a slow watcher may fall behind before it is made to catch up from the log."""
    recent_tables_kept: int = DEFAULT_TABLES_KEPT
    """Tables whose last committed copy a replica keeps, so that a player's next command
    needs no read (0: read every table afresh)."""

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> TablesOptions:
        """The options for ``settings``, with ``overrides`` (field values) on top."""
        options = cls(
            join_base_url=settings.join_base_url,
            finished_table_seconds=settings.finished_table_seconds,
            waiting_table_seconds=settings.waiting_table_seconds,
            idle_table_seconds=settings.idle_table_seconds,
            heartbeat_seconds=settings.heartbeat_seconds,
            log_limit=settings.table_log_events,
            joins_per_minute=settings.joins_per_minute,
            tables_per_minute=settings.tables_per_minute,
            guests_per_minute=settings.guests_per_minute,
        )
        return dataclasses.replace(options, **overrides)
