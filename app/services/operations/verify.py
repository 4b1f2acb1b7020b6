"""Every table of the database checked against its move log (`spades verify`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from app.rules.audit import Mismatch, audit_table
from app.store.audit_reads import audit_batch
from app.store.db import Database

BATCH = 200  # tables (with their logs) read per transaction


@dataclass(slots=True)
class Audit:
    """An audit of every table in a database: iterate `mismatches()`, then read
    `tables` (how many were checked)."""

    db: Database
    tables: int = 0

    async def mismatches(self) -> AsyncIterator[Mismatch]:
        """Each table's disagreements with its move log, table by table (ids in order)."""
        after: str | None = None
        while True:
            batch = await audit_batch(self.db, after, BATCH)
            for table, log in batch:
                self.tables += 1
                for mismatch in audit_table(table, log):
                    yield mismatch
            if len(batch) < BATCH:
                return
            after = batch[-1][0].id
