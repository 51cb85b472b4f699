"""``python -m goti.ai``: the AI service, configured from ``GOTI_*`` variables."""

from __future__ import annotations

import logging
from concurrent.futures import Executor
from functools import partial
from pathlib import Path

import grpc

from goti import serving
from goti.ai.endgames.probing import IncompleteTablesError
from goti.ai.kernel_build import compiled_kernel_modules, describe_kernel_build
from goti.ai.player import use_master_tables
from goti.ai.servicer import available_cpus, bind, search_pool
from goti.settings import Settings

log = logging.getLogger("goti.ai")


async def _bind_saying_the_build(
    server: grpc.aio.Server, *, pool: Executor, workers: int, master_pieces: dict[str, int]
) -> list[str]:
    """:func:`~goti.ai.servicer.bind`, first logging which build of the search runs here
    (once logging is set up; its workers import the same modules from the same path) and
    how many pieces Master's endgame tables hold in each variant."""
    build = describe_kernel_build()
    log.info(
        "search: %s",
        build,
        extra={"search_build": build, "compiled": list(compiled_kernel_modules())},
    )
    log.info(
        "Master's endgame tables: %s",
        ", ".join(f"{variant} up to {pieces} pieces" for variant, pieces in master_pieces.items()),
        extra={"master_endgame_pieces": master_pieces},
    )
    return await bind(server, pool=pool, workers=workers)


def run(settings: Settings, *, port: int | None = None, workers: int | None = None) -> None:
    """Serve the AI until Ctrl-C or SIGTERM with ``workers`` search processes.

    The default is ``GOTI_AI_WORKERS``, and when that is 0, one per CPU available.
    """
    count = workers or settings.ai_workers or available_cpus()
    master_endgames = Path(settings.ai_master_endgames) if settings.ai_master_endgames else None
    try:
        # Checked here, before a worker starts: one that failed to would break the pool.
        master_pieces = use_master_tables(master_endgames)
    except IncompleteTablesError as error:
        raise SystemExit(f"GOTI_AI_MASTER_ENDGAMES: {error}") from None
    pool = search_pool(
        count, search_memory_mb=settings.ai_search_memory_mb, master_endgames=master_endgames
    )
    bind_logging = partial(
        _bind_saying_the_build, pool=pool, workers=count, master_pieces=master_pieces
    )
    try:
        serving.run_service("ai", bind_logging, settings, port=port)
    finally:
        pool.shutdown(cancel_futures=True)


if __name__ == "__main__":
    run(Settings.from_env())
