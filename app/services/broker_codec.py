"""The broker messages as bytes, for brokers that cross process boundaries (Redis).

Game messages carry the whole table snapshot, hidden cards included: they
travel only between server processes and are projected per subscriber on
arrival, never sent to a client as they are.
"""

from __future__ import annotations

import json
from typing import Any

from app.compact_json import dumps
from app.rules.levels import DEFAULT_BOT_LEVEL, BotLevel
from app.rules.matchmaking import TicketStatus
from app.rules.seats import Seat
from app.rules.serialize import (
    finished_from_json,
    game_from_parts,
    game_parts_json,
)
from app.services.accounts.auth import Player, TokenRevoked
from app.services.accounts.revocations import Heard, PlayerRevoked
from app.services.chat.model import ChatMessage, chat_from_data, chat_to_data
from app.services.live.presence import PresenceMessage
from app.services.quickplay.model import MatchmakingNudge, QuickPlayTicket, TicketChanged
from app.services.social.model import FriendRequest, Invitation, Notice, NoticeKind
from app.services.tables.events import GameEvent, LobbyEvent
from app.services.tables.live_state import live_data, live_from_data
from app.services.tables.snapshot import (
    DEFAULT_TURN_SECONDS,
    GameMessage,
    JoinPolicy,
    LobbyMessage,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)

Message = (
    GameMessage
    | LobbyMessage
    | Notice
    | TokenRevoked
    | ChatMessage
    | PresenceMessage
    | PlayerRevoked
    | Heard
    | TicketChanged
    | MatchmakingNudge
)


def encode(message: Message) -> bytes:
    """A message as compact JSON bytes."""
    if isinstance(message, GameMessage):
        seat = message.seat
        head: dict[str, Any] = {
            "k": "game",
            "event": message.event,
            "seat": seat._name_ if seat is not None else None,
            "at": message.committed_at,
        }
        return _with_table(head, message.table)
    if isinstance(message, LobbyMessage):
        return _with_table({"k": "lobby", "event": message.event}, message.table)
    body: dict[str, Any]
    if isinstance(message, TokenRevoked):
        body = {"k": "revoked", "hash": message.token_hash}
    elif isinstance(message, PlayerRevoked):
        body = {"k": "revokedPlayer", "p": [message.player_id, message.reason, message.reply]}
    elif isinstance(message, Heard):
        body = {"k": "heard", "reply": message.reply}
    elif isinstance(message, ChatMessage):
        body = {"k": "chat", **chat_to_data(message)}
    elif isinstance(message, PresenceMessage):
        body = {
            "k": "presence",
            "p": [message.table_id, message.player_id, message.connected, message.changed_at],
        }
    elif isinstance(message, TicketChanged):
        body = {"k": "ticket", "t": _ticket(message.ticket)}
    elif isinstance(message, MatchmakingNudge):
        body = {"k": "nudge"}
    else:
        body = {"k": "notice", **_notice(message)}
    return dumps(body).encode()


def _with_table(head: dict[str, Any], table: TableSnapshot) -> bytes:
    """`head` with the table as its last member, the game's JSON spliced in from the
    pieces serialize.py keeps (a change's several messages, and the table's row, share
    them) rather than built and encoded again for every message."""
    game = table.game
    return "".join(
        (
            dumps(head)[:-1],
            ',"table":',
            dumps(_table(table))[:-1],
            ',"game":',
            game_parts_json(game) if game is not None else "null",
            "}}",
        )
    ).encode()


def decode(data: bytes | str) -> Message:
    """The message `encode` made."""
    body = json.loads(data)
    kind = body["k"]
    if kind == "game":
        seat = Seat[body["seat"]] if body["seat"] is not None else None
        message = GameMessage(GameEvent(body["event"]), seat, _untable(body["table"]))
        message.committed_at = body.get("at") or 0.0
        return message
    if kind == "lobby":
        return LobbyMessage(LobbyEvent(body["event"]), _untable(body["table"]))
    if kind == "revoked":
        return TokenRevoked(body["hash"])
    if kind == "revokedPlayer":
        player_id, reason, reply = body["p"]
        return PlayerRevoked(player_id, reason, reply)
    if kind == "heard":
        return Heard(body["reply"])
    if kind == "chat":
        return chat_from_data(body)
    if kind == "presence":
        table_id, player_id, connected, changed_at = body["p"]
        return PresenceMessage(table_id, player_id, connected, changed_at)
    if kind == "ticket":
        return TicketChanged(_unticket(body["t"]))
    if kind == "nudge":
        return MatchmakingNudge()
    return _unnotice(body)


def _ticket(t: QuickPlayTicket) -> list[Any]:
    return [t.id, t.player_id, t.status.value, t.rated, t.started_at, t.ended_at, t.table_id]


def _unticket(data: list[Any]) -> QuickPlayTicket:
    ticket_id, player_id, status, rated, started_at, ended_at, table_id = data
    return QuickPlayTicket(
        ticket_id, player_id, TicketStatus(status), rated, started_at, ended_at, table_id
    )


def _player(p: Player | None) -> list[str] | None:
    return [p.id, p.username] if p is not None else None


def _unplayer(data: list[str] | None) -> Player | None:
    return Player(data[0], data[1]) if data is not None else None


def _some_player(data: list[str]) -> Player:
    return Player(data[0], data[1])


def _table(t: TableSnapshot) -> dict[str, Any]:
    return {
        "id": t.id,
        "name": t.name,
        "host": [t.host_id, t.host_name],
        "visibility": t.visibility._value_,
        "joinPolicy": t.join_policy._value_,
        "spectating": t.spectating,
        "status": t.status._value_,
        "version": t.version,
        "occupants": [_occupant(o) for o in t.occupants],
        "createdAt": t.created_at,
        "seed": str(t.deal_seed) if t.deal_seed is not None else None,
        "clock": [t.turn_seconds, t.replacement_bot._value_, t.turn_deadline],
        "live": live_data(t),
        "rated": t.rated,
        "finishedAt": t.finished_at,
        "rematch": [s._name_ for s in t.rematch_requests],
        "rematchOf": t.rematch_of,
        "next": t.next_table_id,
    }  # then "game": see _with_table


def _occupant(o: Occupant | None) -> list[str | None] | None:
    if o is None:
        return None
    if o.bot_level is None:
        return [o.player_id, o.username]
    return [o.player_id, o.username, o.bot_level.value]


def _unoccupant(data: list[str] | None) -> Occupant | None:
    if data is None:
        return None
    level = BotLevel(data[2]) if len(data) > 2 and data[2] else None
    return Occupant(data[0], data[1], level)


def _untable(d: dict[str, Any]) -> TableSnapshot:
    # A process of the previous release sends no live-table fields: their defaults.
    clock = d.get("clock") or [DEFAULT_TURN_SECONDS, DEFAULT_BOT_LEVEL.value, None]
    live = live_from_data(d.get("live"))
    return TableSnapshot(
        id=d["id"],
        name=d["name"],
        host_id=d["host"][0],
        host_name=d["host"][1],
        visibility=Visibility(d["visibility"]),
        join_policy=JoinPolicy(d["joinPolicy"]),
        spectating=d["spectating"],
        status=TableStatus(d["status"]),
        version=d["version"],
        occupants=tuple(_unoccupant(o) for o in d["occupants"]),
        game=(
            game_from_parts(
                d["game"]["head"], [finished_from_json(f) for f in d["game"]["finished"]]
            )
            if d["game"] is not None
            else None
        ),
        created_at=d["createdAt"],
        deal_seed=int(d["seed"]) if d["seed"] is not None else None,
        turn_seconds=clock[0],
        replacement_bot=BotLevel(clock[1]),
        turn_deadline=clock[2],
        away=live.away,
        timeouts=live.timeouts,
        timed_out=live.timed_out,
        rated=bool(d.get("rated", False)),
        finished_at=d.get("finishedAt"),
        rematch_requests=tuple(Seat[s] for s in d.get("rematch", ())),
        rematch_of=d.get("rematchOf"),
        next_table_id=d.get("next"),
    )


def _notice(n: Notice) -> dict[str, Any]:
    request = n.friend_request
    invitation = n.invitation
    return {
        "kind": n.kind.value,
        "request": (
            [request.id, _player(request.sender), _player(request.recipient)] if request else None
        ),
        "invitation": (
            [
                invitation.id,
                invitation.table_id,
                _player(invitation.host),
                _player(invitation.invitee),
            ]
            if invitation
            else None
        ),
        "table": n.table_id,
        "other": _player(n.other),
    }


def _unnotice(d: dict[str, Any]) -> Notice:
    request = d["request"]
    invitation = d["invitation"]
    return Notice(
        kind=NoticeKind(d["kind"]),
        friend_request=(
            FriendRequest(request[0], _some_player(request[1]), _some_player(request[2]))
            if request
            else None
        ),
        invitation=(
            Invitation(
                invitation[0],
                invitation[1],
                _some_player(invitation[2]),
                _some_player(invitation[3]),
            )
            if invitation
            else None
        ),
        table_id=d["table"],
        other=_unplayer(d["other"]),
    )
