"""The moderation operations as the API calls them. Every moderator operation starts with
the one authorization check (`Authority.require_moderator`: FORBIDDEN before any other
answer); reporting and a player's own role and mute are open to every signed-in player.
The operator's commands (`spades admin`) call the same services with `OPERATOR`."""

from __future__ import annotations

from app.rules.errors import ErrorCode, RuleError
from app.rules.moderation import ReportReason, ReportStatus, Role
from app.services.accounts.auth import Player
from app.services.accounts.profiles import Page
from app.services.accounts.revocations import PlayerRevocations
from app.services.chat import moderated
from app.services.chat.model import ChatMessage
from app.services.chat.service import ChatService, stored_message
from app.services.moderation.authority import Authority
from app.services.moderation.enforcement import BanEnforcement, BanHandler
from app.services.moderation.model import Actor, Mute, Report, Sanction
from app.services.moderation.reports import ReportService
from app.services.moderation.sanctions import SanctionService
from app.services.social.model import Viewer
from app.services.tables.ledger import Ledger
from app.store.db import Database

# Messages shown each side of a reported one (`Report.context`).
CONTEXT_SPAN = 3


class ModerationService:
    """Roles, reports, sanctions and hidden messages."""

    def __init__(
        self,
        db: Database,
        ledger: Ledger,
        chat: ChatService,
        revocations: PlayerRevocations,
        cursor_key: bytes,
        watch_seconds: float = 2.0,
    ) -> None:
        self.db = db
        self.authority = Authority(db)
        self.enforcement = BanEnforcement(db, ledger, revocations, watch_seconds)
        self.sanctions = SanctionService(db, self.authority, self.enforcement)
        self.reports = ReportService(db, self.authority, chat, cursor_key)

    @property
    def on_ban(self) -> list[BanHandler]:
        """Handlers called with a banned player's id once the ban took effect (quick
        play cancels their SEARCHING ticket here)."""
        return self.enforcement.on_ban

    async def start(self) -> None:
        """Watch for bans stored by processes this one cannot hear."""
        await self.enforcement.start()

    async def stop(self) -> None:
        """Stop watching."""
        await self.enforcement.stop()

    # ------------------------------------------------------------------ every player

    async def role(self, player: Player) -> Role:
        """The caller's role."""
        return await self.authority.role_of(player.id)

    async def mute(self, player: Player) -> Mute | None:
        """The mute holding the caller now, if any."""
        return await self.sanctions.mute_of(player.id)

    async def report_player(
        self,
        reporter: Viewer,
        player_id: str,
        reason: ReportReason,
        message_id: str | None,
        note: str | None,
    ) -> Report:
        """Report a player (see ReportService.report)."""
        return await self.reports.report(reporter, player_id, reason, message_id, note)

    # ------------------------------------------------------------------ moderators

    async def moderator(self, player: Player) -> Actor:
        """The caller as a moderator; FORBIDDEN otherwise. Every operation below starts
        here."""
        return await self.authority.require_moderator(player)

    async def queue(
        self, player: Player, status: ReportStatus, first: int, after: str | None
    ) -> Page[Report]:
        """A page of the reports of `status`, oldest first."""
        await self.moderator(player)
        return await self.reports.queue(status, first, after)

    async def resolve_report(self, player: Player, report_id: str, status: ReportStatus) -> Report:
        """Resolve a report ACTIONED or DISMISSED."""
        actor = await self.moderator(player)
        return await self.reports.resolve(actor, report_id, status)

    async def mute_player(
        self, player: Player, player_id: str, minutes: int, reason: str
    ) -> Sanction:
        """Mute a player for 1..10,080 minutes."""
        actor = await self.moderator(player)
        return await self.sanctions.mute(actor, player_id, minutes, reason)

    async def ban_player(self, player: Player, player_id: str, reason: str) -> Sanction:
        """Ban a player until lifted, in force everywhere before this returns."""
        actor = await self.moderator(player)
        return await self.sanctions.ban(actor, player_id, reason)

    async def lift_sanction(self, player: Player, sanction_id: str) -> Sanction:
        """Lift a sanction."""
        actor = await self.moderator(player)
        return await self.sanctions.lift(actor, sanction_id)

    async def sanctions_of(self, player: Player, player_id: str) -> list[Sanction]:
        """A player's sanctions, newest first."""
        await self.moderator(player)
        return await self.sanctions.of_player(player_id)

    async def hide_message(self, player: Player, message_id: str) -> bool:
        """Hide a chat message from every `chat` answer (reports still show it)."""
        actor = await self.moderator(player)
        known = await stored_message(self.db, message_id) is not None
        if not known and not await self.reports.knows_message(message_id):
            raise RuleError(ErrorCode.NOT_FOUND, "no such message")
        await moderated.hide(self.db, message_id, actor.id)
        return True

    async def context(self, player: Player, report: Report) -> list[ChatMessage]:
        """The reported message among the few around it (moderators; others get none)."""
        if report.message is None or not (await self.role(player)).moderates:
            return []
        return await moderated.around(self.db, report.message, CONTEXT_SPAN)

    async def message_hidden(self, player: Player, report: Report) -> bool:
        """Whether the reported message is hidden (told to moderators only)."""
        if report.message is None or not (await self.role(player)).moderates:
            return False
        return report.message.id in await moderated.hidden_among(self.db, [report.message.id])
