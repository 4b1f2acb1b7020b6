"""Publishing ticket changes: each on its owner's channel, and an ended ticket marked
announced once published (the matchmaker publishes again whatever stayed unmarked, e.g.
when the process that ended it died before publishing)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from app.broker.base import Broker
from app.services.quickplay.model import QuickPlayTicket, TicketChanged, ticket_channel
from app.store import tickets as rows
from app.store.db import Database

log = logging.getLogger(__name__)


async def announce(db: Database, broker: Broker[Any], tickets: Sequence[QuickPlayTicket]) -> None:
    """Publish each ticket's change; mark the ended ones announced if all went out."""
    if await publish(broker, tickets):
        await mark_announced(db, [t.id for t in tickets if t.status.final])


async def publish(broker: Broker[Any], tickets: Sequence[QuickPlayTicket]) -> bool:
    """Publish each ticket's change on its owner's channel; False if one failed."""
    try:
        for ticket in tickets:
            await broker.publish(ticket_channel(ticket.player_id), TicketChanged(ticket))
    except Exception:  # the matchmaker publishes the unmarked ones again
        log.warning("quick play: could not publish ticket changes", exc_info=True)
        return False
    return True


async def mark_announced(db: Database, ticket_ids: Sequence[str]) -> None:
    """The ends of these tickets went out (best effort: else they go out again)."""
    if not ticket_ids:
        return
    try:
        async with db.write() as session:
            await rows.mark_announced(session, ticket_ids)
    except Exception:  # announced again later: subscribers drop repeats
        log.warning("quick play: could not mark tickets announced", exc_info=True)
