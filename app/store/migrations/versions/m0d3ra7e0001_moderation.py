"""moderation: roles (players.role and their changes), reports, sanctions and hidden
chat messages

Revision ID: m0d3ra7e0001
Revises: m0ve5idx0001
Create Date: 2026-12-06 03:38:40
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "m0d3ra7e0001"
down_revision: str | None = "m0ve5idx0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "hidden_chat_messages",
        sa.Column("message_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("by_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("hidden_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["by_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("message_id"),
    )
    op.create_table(
        "reports",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("reporter_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("reported_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("reason", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("message_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("table_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("message_channel", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True),
        sa.Column("message_text", sa.Text(), nullable=True),
        sa.Column("message_sent_at", sa.Float(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("resolved_by", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("resolved_at", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["reported_id"],
            ["players.id"],
        ),
        sa.ForeignKeyConstraint(
            ["reporter_id"],
            ["players.id"],
        ),
        sa.ForeignKeyConstraint(
            ["resolved_by"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("seq"),
        sa.UniqueConstraint("id"),
        sa.UniqueConstraint("reporter_id", "message_id", name="uq_report_message"),
    )
    with op.batch_alter_table("reports", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reports_reported_id"), ["reported_id"], unique=False)
        batch_op.create_index("ix_reports_reporter", ["reporter_id", "created_at"], unique=False)
        batch_op.create_index("ix_reports_status", ["status", "seq"], unique=False)

    op.create_table(
        "role_changes",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("role", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("previous", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("by_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["by_id"],
            ["players.id"],
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("seq"),
    )
    with op.batch_alter_table("role_changes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_role_changes_player_id"), ["player_id"], unique=False)

    op.create_table(
        "sanctions",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("by_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("ends_at", sa.Float(), nullable=True),
        sa.Column("lifted_at", sa.Float(), nullable=True),
        sa.Column("lifted_by", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["by_id"],
            ["players.id"],
        ),
        sa.ForeignKeyConstraint(
            ["lifted_by"],
            ["players.id"],
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("seq"),
        sa.UniqueConstraint("id"),
    )
    with op.batch_alter_table("sanctions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sanctions_player_id"), ["player_id"], unique=False)

    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "role",
                sqlmodel.sql.sqltypes.AutoString(length=16),
                server_default="PLAYER",
                nullable=False,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("role")

    with op.batch_alter_table("sanctions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sanctions_player_id"))

    op.drop_table("sanctions")
    with op.batch_alter_table("role_changes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_role_changes_player_id"))

    op.drop_table("role_changes")
    with op.batch_alter_table("reports", schema=None) as batch_op:
        batch_op.drop_index("ix_reports_status")
        batch_op.drop_index("ix_reports_reporter")
        batch_op.drop_index(batch_op.f("ix_reports_reported_id"))

    op.drop_table("reports")
    op.drop_table("hidden_chat_messages")
