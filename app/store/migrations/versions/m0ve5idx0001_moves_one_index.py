"""moves: drop the index on table_id alone (the unique (table_id, seq) index serves
every read of a table's log, and each move paid for updating both)

Revision ID: m0ve5idx0001
Revises: sp3c7a7015kept
Create Date: 2026-12-05 00:40:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "m0ve5idx0001"
down_revision: str | None = "sp3c7a7015kept"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("moves", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_moves_table_id"))


def downgrade() -> None:
    with op.batch_alter_table("moves", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_moves_table_id"), ["table_id"], unique=False)
