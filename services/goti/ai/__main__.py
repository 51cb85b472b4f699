"""``python -m goti.ai``: the AI service, configured from ``GOTI_*`` variables."""

from __future__ import annotations

from functools import partial

from goti import serving
from goti.ai.servicer import available_cpus, bind, search_pool
from goti.settings import Settings


def run(settings: Settings, *, port: int | None = None, workers: int | None = None) -> None:
    """Serve the AI until Ctrl-C or SIGTERM with ``workers`` search processes.

    The default is ``GOTI_AI_WORKERS``, and when that is 0, one per CPU available.
    """
    count = workers or settings.ai_workers or available_cpus()
    pool = search_pool(count)
    try:
        serving.run_service("ai", partial(bind, pool=pool, workers=count), settings, port=port)
    finally:
        pool.shutdown(cancel_futures=True)


if __name__ == "__main__":
    run(Settings.from_env())
