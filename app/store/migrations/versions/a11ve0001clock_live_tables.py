"""live tables: turn clock, replacement bot, turn deadline (indexed), away players

Revision ID: a11ve0001clock
Revises: b07a1e7e1001
Create Date: 2026-12-02 05:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "a11ve0001clock"
down_revision: str | None = "b07a1e7e1001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("turn_seconds", sa.Integer(), nullable=False, server_default="30")
        )
        batch_op.add_column(
            sa.Column(
                "replacement_bot",
                sqlmodel.sql.sqltypes.AutoString(length=16),
                nullable=False,
                server_default="BASIC",
            )
        )
        batch_op.add_column(sa.Column("turn_deadline", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("live_state", sa.Text(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_tables_turn_deadline"), ["turn_deadline"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tables_turn_deadline"))
        batch_op.drop_column("live_state")
        batch_op.drop_column("turn_deadline")
        batch_op.drop_column("replacement_bot")
        batch_op.drop_column("turn_seconds")
