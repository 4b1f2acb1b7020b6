"""`spades admin`: the operator's commands (docs/operations.md): roles, bans, mutes and
closing a table. Each works while servers run and takes effect on every process at
once: the database is shared, and the change reaches every process through the broker
(without one, each server process finds it in the database within seconds). They run
the same code as the moderators' mutations and the server's own closing, with the
operator recorded as no player."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.rules.errors import RuleError
from app.rules.moderation import Role

if TYPE_CHECKING:  # imported when a command runs: `spades --help` stays quick
    from app.services.container import Operator


def _run(args: argparse.Namespace, action: Callable[[Operator], Awaitable[str]]) -> int:
    from app.settings import load_settings

    settings = load_settings().with_overrides(
        database_url=args.database_url, broker_url=args.broker_url
    )

    from app.services.container import BrokerUnreachable, operator_services

    async def main() -> str:
        async with operator_services(settings) as ops:
            return await action(ops)

    try:
        print(asyncio.run(main()))
    except RuleError as refusal:
        print(
            f"refused ({refusal.code.value}): {refusal.message}; nothing changed", file=sys.stderr
        )
        return 1
    except BrokerUnreachable as unreachable:
        print(f"{unreachable}; nothing changed", file=sys.stderr)
        return 1
    return 0


def _instant(epoch: float | None) -> str:
    if epoch is None:
        return "until lifted"
    return "until " + datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _role(args: argparse.Namespace) -> int:
    async def action(ops: Operator) -> str:
        player, _ = await ops.authority.by_username(args.username)
        previous = await ops.authority.set_role(ops.actor, player.id, Role(args.role))
        return f"{player.username}: {args.role} (was {previous.value})"

    return _run(args, action)


def _ban(args: argparse.Namespace) -> int:
    async def action(ops: Operator) -> str:
        player, _ = await ops.authority.by_username(args.username)
        ban = await ops.sanctions.ban(ops.actor, player.id, args.reason, ops.broadcast)
        told = "" if ops.broadcast else " (no broker: servers carry it out within seconds)"
        return f"{player.username} banned until lifted, sanction {ban.id}{told}"

    return _run(args, action)


def _unban(args: argparse.Namespace) -> int:
    async def action(ops: Operator) -> str:
        player, _ = await ops.authority.by_username(args.username)
        lifted = await ops.sanctions.lift_bans(ops.actor, player.id)
        if not lifted:
            return f"{player.username} is not banned"
        return f"{player.username} may sign in again ({len(lifted)} ban lifted)"

    return _run(args, action)


def _mute(args: argparse.Namespace) -> int:
    async def action(ops: Operator) -> str:
        player, _ = await ops.authority.by_username(args.username)
        mute = await ops.sanctions.mute(ops.actor, player.id, args.minutes, args.reason)
        return f"{player.username} muted {_instant(mute.ends_at)}, sanction {mute.id}"

    return _run(args, action)


def _close_table(args: argparse.Namespace) -> int:
    async def action(ops: Operator) -> str:
        closed = await ops.tables.close(args.table_id, args.reason)
        return f"table {closed.id} closed at version {closed.version}"

    return _run(args, action)


def _connections(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database-url", default=None, help="as for spades serve")
    parser.add_argument(
        "--broker-url", default=None, help="the servers' Redis (default: SPADES_BROKER_URL)"
    )


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `spades admin` and its subcommands."""
    admin = commands.add_parser(
        "admin", help="operator commands: roles, bans, mutes, closing a table"
    )
    actions = admin.add_subparsers(dest="action", required=True)

    role = actions.add_parser("role", help="make a player a PLAYER, MODERATOR or ADMIN")
    role.add_argument("username")
    role.add_argument("role", choices=[r.value for r in Role], type=str.upper)
    role.set_defaults(run=_role)

    ban = actions.add_parser("ban", help="ban a player until unbanned, on every process")
    ban.add_argument("username")
    ban.add_argument("--reason", required=True)
    ban.set_defaults(run=_ban)

    unban = actions.add_parser("unban", help="lift a player's ban (they may sign in again)")
    unban.add_argument("username")
    unban.set_defaults(run=_unban)

    mute = actions.add_parser("mute", help="keep a player from chatting for N minutes")
    mute.add_argument("username")
    mute.add_argument("--minutes", type=int, required=True, help="1 to 10,080")
    mute.add_argument("--reason", required=True)
    mute.set_defaults(run=_mute)

    close = actions.add_parser(
        "close-table", help="close a table now: TABLE_CLOSED, out of the lobby, moves refused"
    )
    close.add_argument("table_id", metavar="TABLE_ID")
    close.add_argument("--reason", required=True, help="kept in the table's move log")
    close.set_defaults(run=_close_table)

    for parser in (role, ban, unban, mute, close):
        _connections(parser)
