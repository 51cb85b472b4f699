"""``python -m goti.tables`` (or ``goti serve tables``): the tables service, configured from
``GOTI_*`` variables.  The composition root: it opens Redis and the channels to the referee
and the AI, then serves gRPC, and the web page with the same API over Connect and gRPC-Web
(``GOTI_WEB_PORT``), until SIGTERM or SIGINT."""

from __future__ import annotations

import logging
import sys

from goti import serving
from goti.settings import Settings, SettingsError, unknown_variables
from goti.tables.redis_calls import StoreUnavailableError
from goti.tables.runtime import TablesRuntime
from goti.web.server import start_web_server

log = logging.getLogger("goti.tables")


async def serve(settings: Settings, *, port: int | None = None) -> None:
    """Run the tables service until SIGTERM or SIGINT."""
    async with TablesRuntime.open(settings) as runtime:
        try:
            await runtime.store.ping()
        except StoreUnavailableError as error:
            # Serve anyway: calls answer UNAVAILABLE until Redis is back, then work.
            log.warning("Redis does not answer yet: %s", error)
        # One registry for both servers: /metrics shows the web port's calls beside gRPC's.
        registry = serving.new_registry()
        web = None
        if settings.web_port:
            web = await start_web_server(
                runtime.tables_servicer,
                runtime.players_servicer,
                runtime.matchmaking_servicer,
                settings,
                port=settings.web_port,
                registry=registry,
            )

        async def drain() -> None:
            if web is not None:
                web.stop_accepting()
            await runtime.drain()

        try:
            await serving.serve(
                "tables", runtime.bind, settings, port=port, registry=registry, drain=drain
            )
        finally:
            if web is not None:
                await web.stop()


def run(settings: Settings, *, port: int | None = None) -> None:
    """Serve with ``settings`` until SIGTERM or SIGINT (``goti serve tables`` calls this);
    exits with status 2 when no Redis is configured."""
    if not settings.redis_url:
        print(
            "goti tables: bad configuration:\nGOTI_REDIS_URL must name the Redis that holds "
            "the tables, e.g. redis://localhost:6379/0",
            file=sys.stderr,
        )
        raise SystemExit(2)
    serving.configure_logging(settings)
    for note in unknown_variables():
        log.warning("ignoring unknown setting %s", note, extra={"variable": note})
    serving.run(lambda: serve(settings, port=port))


def main() -> None:
    """Read the settings, then serve; exits with status 2 on a configuration problem."""
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        print(f"goti tables: bad configuration:\n{error}", file=sys.stderr)
        raise SystemExit(2) from None
    run(settings)


if __name__ == "__main__":
    main()
