"""Schema migrations (Alembic), configured in code so the installed package carries them."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(database_url: str) -> Config:
    """An Alembic config for `database_url` and the packaged migrations."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str) -> None:
    """Apply every pending migration. Runs its own event loop: call it from a thread or
    from synchronous code."""
    command.upgrade(alembic_config(database_url), "head")


def revision(database_url: str, message: str) -> None:
    """Autogenerate a new migration from the models (for developers)."""
    command.revision(alembic_config(database_url), message=message, autogenerate=True)


def check(database_url: str) -> None:
    """Fail if the models have drifted from the migrations."""
    command.check(alembic_config(database_url))


def downgrade(database_url: str, revision: str) -> None:
    """Undo migrations down to `revision` (tests of a migration on existing data)."""
    command.downgrade(alembic_config(database_url), revision)
