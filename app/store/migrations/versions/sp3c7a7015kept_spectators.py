"""spectators: who watched a table, and who keeps a spectator's access to a rematch

Revision ID: sp3c7a7015kept
Revises: a11ve0001clock
Create Date: 2026-12-02 17:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "sp3c7a7015kept"
down_revision: str | None = "a11ve0001clock"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "spectators",
        sa.Column("table_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("kept", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.ForeignKeyConstraint(["table_id"], ["tables.id"]),
        sa.PrimaryKeyConstraint("table_id", "player_id"),
    )
    with op.batch_alter_table("spectators", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_spectators_player_id"), ["player_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("spectators", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_spectators_player_id"))
    op.drop_table("spectators")
