"""`spades admin`: an operator's actions, taking effect at once on every running server
process (through the database, and the broker when one is configured)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from app.settings import Settings, load_settings


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings().with_overrides(
        database_url=args.database_url, broker_url=args.broker_url
    )


def _close_table(args: argparse.Namespace) -> int:
    return asyncio.run(_close(_settings(args), args.table_id, args.reason))


async def _close(settings: Settings, table_id: str, reason: str) -> int:
    from app.rules.errors import RuleError
    from app.services.container import BrokerUnreachable, operator_services

    try:
        async with operator_services(settings) as operator:
            closed = await operator.tables.close(table_id, reason)
    except (RuleError, BrokerUnreachable) as exc:
        print(f"close-table: {exc}; nothing changed", file=sys.stderr)
        return 1
    print(f"table {closed.id} closed at version {closed.version}", file=sys.stderr)
    return 0


def _connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database-url", default=None, help="default: SPADES_DATABASE_URL")
    parser.add_argument(
        "--broker-url",
        default=None,
        help="the servers' broker (default: SPADES_BROKER_URL); required to reach their "
        "subscribers when they run with one",
    )


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `admin` and its actions."""
    admin = commands.add_parser("admin", help="operator actions on a running installation")
    actions = admin.add_subparsers(dest="action", required=True)

    close = actions.add_parser(
        "close-table", help="close a table now: TABLE_CLOSED, out of the lobby, moves refused"
    )
    close.add_argument("table_id", metavar="TABLE_ID")
    close.add_argument("--reason", required=True, help="kept in the table's move log")
    _connection_options(close)
    close.set_defaults(run=_close_table)
