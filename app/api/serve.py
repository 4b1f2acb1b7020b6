"""`spades serve`: pending migrations applied, then uvicorn, each process draining on
SIGTERM and SIGINT (app/api/lifecycle.py)."""

from __future__ import annotations

import os

import uvicorn
from starlette.applications import Starlette

from app.api import fastpath, lifecycle
from app.api.app import create_app
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
    config = uvicorn.Config(
        "app.api.serve:served_app",
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
    lifecycle.run(config)


def served_app() -> Starlette:
    """The app of one server process, its readiness following the process's lifecycle
    (uvicorn's factory, called in each worker)."""
    return create_app(lifecycle=lifecycle.process_lifecycle())
