"""Chat messages and channels, and their form on the broker."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.services.accounts.auth import Player


class ChatChannel(StrEnum):
    """A table's two chat channels."""

    PLAYERS = "PLAYERS"  # seated players write; seated players and spectators read
    SPECTATORS = "SPECTATORS"  # spectators write and read; seated players once it is over


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One accepted message, as stored, published and served."""

    id: str
    table_id: str
    channel: ChatChannel
    sender: Player
    text: str
    sent_at: float  # epoch seconds


def chat_channel(table_id: str) -> str:
    """The broker channel of one table's chat messages (both chat channels)."""
    return f"chat:{table_id}"


def chat_to_data(message: ChatMessage) -> dict[str, Any]:
    """A message as JSON-able data (the broker's wire form)."""
    return {
        "id": message.id,
        "table": message.table_id,
        "channel": message.channel.value,
        "from": [message.sender.id, message.sender.username],
        "text": message.text,
        "at": message.sent_at,
    }


def chat_from_data(data: dict[str, Any]) -> ChatMessage:
    """The message `chat_to_data` described."""
    return ChatMessage(
        id=data["id"],
        table_id=data["table"],
        channel=ChatChannel(data["channel"]),
        sender=Player(data["from"][0], data["from"][1]),
        text=data["text"],
        sent_at=data["at"],
    )
