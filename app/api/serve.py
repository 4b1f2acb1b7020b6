"""`spades serve`: pending migrations applied, then uvicorn."""

from __future__ import annotations

import os

import uvicorn

from app.api import fastpath
from app.logs import configure
from app.settings import load_settings
from app.store.migrate import upgrade


def serve(
    host: str | None = None,
    port: int | None = None,
    database_url: str | None = None,
    workers: int = 1,
) -> None:
    """Apply pending migrations, then run the server with uvicorn (flags override the
    environment). With several workers, the processes share one port."""
    settings = load_settings().with_overrides(host=host, port=port, database_url=database_url)
    # Applied here and, by uvicorn, in each worker process it starts.
    log_config = configure(settings.log_level, settings.log_format)
    fastpath.configure(settings)
    upgrade(settings.database_url)
    # Workers read their settings from the environment: pass the flags on through it.
    os.environ["SPADES_DATABASE_URL"] = settings.database_url
    uvicorn.run(
        "app.api.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=max(1, workers),
        log_config=log_config,
        log_level=settings.log_level,
        **fastpath.uvicorn_protocols(),
        ws_per_message_deflate=False,
        ws_max_size=settings.max_ws_message_bytes,
    )
