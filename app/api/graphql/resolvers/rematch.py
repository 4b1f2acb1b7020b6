"""`requestRematch`: after GAME_OVER, the same four seats play again at a new table."""

from __future__ import annotations

import strawberry
from strawberry.types import Info

from app.api.graphql.context import Context, require_viewer, services_of
from app.api.graphql.errors import translate_errors
from app.api.graphql.table_types import Table

InfoT = Info[Context, None]


@strawberry.type
class RematchMutation:
    @strawberry.mutation(
        description="within 5 minutes of GAME_OVER, seated players only; answers the rematch "
        "table once every seated human asked (bots agree), else this table"
    )
    @translate_errors
    async def request_rematch(self, info: InfoT, table_id: strawberry.ID) -> Table:
        viewer = await require_viewer(info)
        table = await services_of(info).rematch.request(viewer, str(table_id))
        return Table.of(table, viewer)
