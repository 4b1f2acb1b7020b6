"""Every table of the database on one metadata: the game tables (`models`), the career
tables (`career`), the moderation tables (`moderation`) and quick play's
(`quickplay`). The database and the migrations' environment import this module, so
`alembic check` compares the migrations against all of them."""

from __future__ import annotations

from sqlmodel import SQLModel

from app.store import career, models, moderation, quickplay

METADATA = SQLModel.metadata
TABLE_MODULES = (models, career, moderation, quickplay)
