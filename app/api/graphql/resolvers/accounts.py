"""Accounts: who the caller is, signing up, in and out."""

from __future__ import annotations

import strawberry
from strawberry.types import Info

from app.api.graphql.context import Context, client_ip, require_player, services_of
from app.api.graphql.errors import translate_errors
from app.api.graphql.game_view import player_type
from app.api.graphql.types import AuthPayload, Player
from app.services.rate_limits import Rule

InfoT = Info[Context, None]


@strawberry.type
class AccountQuery:
    @strawberry.field
    @translate_errors
    async def me(self, info: InfoT) -> Player | None:
        return player_type(await require_player(info))


@strawberry.type
class AccountMutation:
    @strawberry.mutation
    @translate_errors
    async def sign_up(self, info: InfoT, username: str, password: str) -> AuthPayload:
        services = services_of(info)
        await services.limits.check(Rule.AUTH_IP, client_ip(info))
        token, player = await services.auth.sign_up(username, password)
        return AuthPayload(token=token, player=player_type(player))

    @strawberry.mutation
    @translate_errors
    async def sign_in(self, info: InfoT, username: str, password: str) -> AuthPayload:
        services = services_of(info)
        await services.limits.check(Rule.AUTH_IP, client_ip(info))
        await services.limits.check(Rule.SIGN_IN_USER, str(username).lower()[:40])
        token, player = await services.auth.sign_in(username, password)
        return AuthPayload(token=token, player=player_type(player))

    @strawberry.mutation(description="revoke the token of this request (its WebSockets close)")
    @translate_errors
    async def sign_out(self, info: InfoT) -> bool:
        await require_player(info)
        token = info.context.token
        return token is not None and await services_of(info).sign_out(token)
