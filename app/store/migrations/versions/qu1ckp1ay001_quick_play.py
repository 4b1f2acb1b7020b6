"""quick play: tickets (one SEARCHING per player) and the matchmaking lease

Revision ID: qu1ckp1ay001
Revises: m0d3ra7e0001
Create Date: 2026-12-06 03:40:59
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "qu1ckp1ay001"
down_revision: str | None = "m0d3ra7e0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEARCHING_ONLY = sa.text("status = 'SEARCHING'")
UNANNOUNCED_ONLY = sa.text("NOT announced")


def upgrade() -> None:
    op.create_table(
        "quickplay_lease",
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("holder", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "quickplay_tickets",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=10), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("ended_at", sa.Float(), nullable=True),
        sa.Column("table_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("announced", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.ForeignKeyConstraint(["table_id"], ["tables.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("quickplay_tickets", schema=None) as batch_op:
        batch_op.create_index(
            "ix_quickplay_tickets_player", ["player_id", "started_at"], unique=False
        )
        batch_op.create_index(
            "ix_quickplay_tickets_unannounced",
            ["ended_at"],
            unique=False,
            sqlite_where=UNANNOUNCED_ONLY,
            postgresql_where=UNANNOUNCED_ONLY,
        )
        batch_op.create_index(
            "uq_quickplay_tickets_searching",
            ["player_id"],
            unique=True,
            sqlite_where=SEARCHING_ONLY,
            postgresql_where=SEARCHING_ONLY,
        )


def downgrade() -> None:
    with op.batch_alter_table("quickplay_tickets", schema=None) as batch_op:
        batch_op.drop_index("uq_quickplay_tickets_searching")
        batch_op.drop_index("ix_quickplay_tickets_unannounced")
        batch_op.drop_index("ix_quickplay_tickets_player")
    op.drop_table("quickplay_tickets")
    op.drop_table("quickplay_lease")
