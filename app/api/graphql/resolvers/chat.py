"""Table chat in GraphQL: the `chat` history, `sendChat` and the `chatMessages` stream."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from enum import Enum

import strawberry
from strawberry.types import Info

from app.api.graphql.context import Context, require_viewer, services_of, subscription_slot
from app.api.graphql.errors import translate_errors
from app.api.graphql.game_view import iso_instant, player_type
from app.api.graphql.types import Player
from app.api.metrics import SUBSCRIPTIONS
from app.services.chat import model as chat

InfoT = Info[Context, None]


@strawberry.enum
class ChatChannel(Enum):
    PLAYERS = "PLAYERS"
    SPECTATORS = "SPECTATORS"

    def to_service(self) -> chat.ChatChannel:
        """The service layer's channel."""
        return chat.ChatChannel(self.value)


@strawberry.type
class ChatMessage:
    id: strawberry.ID
    table_id: strawberry.ID
    channel: ChatChannel
    from_: Player = strawberry.field(name="from")
    text: str = strawberry.field(description="as written (trimmed); clients must escape it")
    sent_at: str = strawberry.field(description="ISO-8601 UTC")

    @classmethod
    def of(cls, message: chat.ChatMessage) -> ChatMessage:
        """The GraphQL message."""
        return cls(
            id=strawberry.ID(message.id),
            table_id=strawberry.ID(message.table_id),
            channel=ChatChannel(message.channel.value),
            from_=player_type(message.sender),
            text=message.text,
            sent_at=iso_instant(message.sent_at),
        )


@strawberry.type
class ChatQuery:
    @strawberry.field(description="the last messages of a channel you may read, oldest first")
    @translate_errors
    async def chat(
        self, info: InfoT, table_id: strawberry.ID, channel: ChatChannel, last: int | None = 50
    ) -> list[ChatMessage]:
        viewer = await require_viewer(info)
        history = await services_of(info).chat.history(
            viewer, str(table_id), channel.to_service(), 50 if last is None else last
        )
        return [ChatMessage.of(m) for m in history]


@strawberry.type
class ChatMutation:
    @strawberry.mutation(
        description="1..300 characters after trimming, no control characters; "
        "at most 5 messages per 10 s"
    )
    @translate_errors
    async def send_chat(
        self, info: InfoT, table_id: strawberry.ID, channel: ChatChannel, text: str
    ) -> ChatMessage:
        viewer = await require_viewer(info)
        message = await services_of(info).chat.send(
            viewer, str(table_id), channel.to_service(), text
        )
        return ChatMessage.of(message)


@strawberry.type
class ChatSubscription:
    @strawberry.subscription(description="new messages the subscriber may read")
    @translate_errors
    async def chat_messages(
        self, info: InfoT, table_id: strawberry.ID
    ) -> AsyncGenerator[ChatMessage, None]:
        viewer = await require_viewer(info)
        stream = services_of(info).chat.messages(viewer, str(table_id))
        with subscription_slot(info), SUBSCRIPTIONS.labels("chat").track_inprogress():
            async for message in stream:
                yield ChatMessage.of(message)
