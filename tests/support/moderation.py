"""Moderation through the API and the operator's command line: the operations of the
contract as calls, and `spades admin` run for real against a server's database."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from typing import Any

import asyncpg  # type: ignore[import-untyped]

from .client import Api, ApiError
from .server import ROOT, TEST_ENV, LiveServer

PLAYER = "id username"
MESSAGE = f"id tableId channel from {{ {PLAYER} }} text sentAt"
REPORT_FIELDS = (
    f"id reporter {{ {PLAYER} }} reported {{ {PLAYER} }} reason note "
    f"message {{ {MESSAGE} }} tableId createdAt status resolvedBy {{ {PLAYER} }}"
)
SANCTION_FIELDS = (
    f"id player {{ {PLAYER} }} kind reason by {{ {PLAYER} }} createdAt endsAt liftedAt "
    f"liftedBy {{ {PLAYER} }}"
)
MY_ROLE = "{ myRole }"
MY_MUTE = "{ myMute { reason endsAt } }"
REPORT = (
    "mutation($p: ID!, $r: ReportReason!, $m: ID, $n: String) { reportPlayer(playerId: $p, "
    f"reason: $r, messageId: $m, note: $n) {{ {REPORT_FIELDS} }} }}"
)
REPORTS = (
    "query($s: ReportStatus, $f: Int, $a: String) { reports(status: $s, first: $f, "
    f"after: $a) {{ edges {{ cursor node {{ {REPORT_FIELDS} }} }} "
    "pageInfo { hasNextPage endCursor } } }"
)
REPORT_CONTEXT = (
    "query($s: ReportStatus) { reports(status: $s, first: 100) { edges { node { id "
    f"messageHidden context {{ {MESSAGE} }} message {{ {MESSAGE} }} }} }} }} }}"
)
RESOLVE = (
    "mutation($r: ID!, $s: ReportStatus!) { resolveReport(reportId: $r, status: $s) "
    f"{{ {REPORT_FIELDS} resolvedAt }} }}"
)
MUTE = (
    "mutation($p: ID!, $m: Int!, $r: String!) { mutePlayer(playerId: $p, minutes: $m, "
    f"reason: $r) {{ {SANCTION_FIELDS} }} }}"
)
BAN = f"mutation($p: ID!, $r: String!) {{ banPlayer(playerId: $p, reason: $r) {{ {SANCTION_FIELDS} }} }}"  # noqa: E501
LIFT = f"mutation($s: ID!) {{ liftSanction(sanctionId: $s) {{ {SANCTION_FIELDS} }} }}"
SANCTIONS = f"query($p: ID!) {{ sanctions(playerId: $p) {{ {SANCTION_FIELDS} }} }}"
HIDE = "mutation($m: ID!) { hideChatMessage(messageId: $m) }"
SIGN_IN = (
    "mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) "
    "{ token player { id username } } }"
)
RECLAIM = "mutation($t: ID!) { reclaimSeat(tableId: $t) { id } }"


async def report(
    api: Api,
    player_id: str,
    reason: str = "ABUSIVE_CHAT",
    message_id: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """reportPlayer: the report."""
    data = await api.call(REPORT, p=player_id, r=reason, m=message_id, n=note)
    return dict(data["reportPlayer"])


async def reports(
    api: Api, status: str | None = None, first: int | None = None, after: str | None = None
) -> dict[str, Any]:
    """`reports(...)`: the connection."""
    variables: dict[str, Any] = {"s": status, "a": after}
    if first is not None:
        variables["f"] = first
    return dict((await api.call(REPORTS, **variables))["reports"])


async def all_reports(api: Api, status: str = "OPEN", first: int = 3) -> list[dict[str, Any]]:
    """Every report of `status`, page by page."""
    nodes: list[dict[str, Any]] = []
    after = None
    while True:
        page = await reports(api, status, first, after)
        nodes.extend(edge["node"] for edge in page["edges"])
        if not page["pageInfo"]["hasNextPage"]:
            return nodes
        after = page["pageInfo"]["endCursor"]


async def resolve(api: Api, report_id: str, status: str) -> dict[str, Any]:
    """resolveReport: the report."""
    return dict((await api.call(RESOLVE, r=report_id, s=status))["resolveReport"])


async def mute(api: Api, player_id: str, minutes: int, reason: str = "rude") -> dict[str, Any]:
    """mutePlayer: the sanction."""
    return dict((await api.call(MUTE, p=player_id, m=minutes, r=reason))["mutePlayer"])


async def ban(api: Api, player_id: str, reason: str = "abuse") -> dict[str, Any]:
    """banPlayer: the sanction."""
    return dict((await api.call(BAN, p=player_id, r=reason))["banPlayer"])


async def lift(api: Api, sanction_id: str) -> dict[str, Any]:
    """liftSanction: the sanction."""
    return dict((await api.call(LIFT, s=sanction_id))["liftSanction"])


async def sanctions(api: Api, player_id: str) -> list[dict[str, Any]]:
    """`sanctions(playerId)`, newest first."""
    return list((await api.call(SANCTIONS, p=player_id))["sanctions"])


async def sign_in(api: Api, password: str = "password123") -> str:
    """signIn as the api's player: the new token (the api keeps its own)."""
    data = await api.call(SIGN_IN, u=api.username, p=password)
    return str(data["signIn"]["token"])


async def refusal(coroutine: Any) -> str | None:
    """The `extensions.code` an awaited call fails with (AssertionError if it succeeds)."""
    try:
        await coroutine
    except ApiError as exc:
        return str(exc.code) if exc.code is not None else None
    raise AssertionError("expected a refusal")


def admin(
    server: LiveServer, *arguments: str, broker: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `spades admin ARGUMENTS` on the server's database (and broker), as an operator
    would, while the server runs."""
    env = {**os.environ, **TEST_ENV}
    env.pop("SPADES_BROKER_URL", None)
    command = [sys.executable, "-c", "from app.cli import main; main()", "admin", *arguments]
    command += ["--database-url", server.database_url]
    if broker is not None:
        command += ["--broker-url", broker]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def make_role(server: LiveServer, username: str, role: str) -> None:
    """`spades admin role USERNAME ROLE`, which must succeed."""
    done = admin(server, "role", username, role)
    assert done.returncode == 0, done.stderr


def grant(server: LiveServer, player_id: str, role: str) -> None:
    """Give a role straight in the server's database (a fixture's shortcut for what
    `spades admin role` does: the command itself is tested on its own). Roles are read
    on every check, so it holds at once."""
    url = server.database_url
    if url.startswith("sqlite"):
        with sqlite3.connect(server.database) as db:
            db.execute("UPDATE players SET role = ? WHERE id = ?", (role, player_id))
        return

    async def update() -> None:
        connection = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
        try:
            await connection.execute("UPDATE players SET role = $1 WHERE id = $2", role, player_id)
        finally:
            await connection.close()

    asyncio.run(update())
