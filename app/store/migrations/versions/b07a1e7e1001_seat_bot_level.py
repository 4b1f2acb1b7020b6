"""seats.bot_level: the level of the bot holding a seat

Revision ID: b07a1e7e1001
Revises: ra7e0001career
Create Date: 2026-12-02 05:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "b07a1e7e1001"
down_revision: str | None = "ra7e0001career"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("bot_level", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("bot_level")
