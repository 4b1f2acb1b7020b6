"""GraphQL enums that mirror the service layer's own (the names are defined once there).

`strawberry.enum` registers each service enum class itself as a GraphQL enum, so
resolvers return the service values as they are.
"""

from __future__ import annotations

import strawberry

from app.rules.matchmaking import TicketStatus
from app.services.social import model as social
from app.services.tables import events
from app.services.tables import snapshot as model

strawberry.enum(events.GameEvent, name="GameEvent", description="what changed at a table")
strawberry.enum(events.LobbyEvent, name="LobbyEvent", description="what changed in the lobby")
strawberry.enum(social.NotificationEvent, name="NotificationEvent")
strawberry.enum(model.TableStatus, name="TableStatus", description="CLOSED: closed unfinished")
strawberry.enum(TicketStatus, name="QuickPlayStatus", description="a quick-play ticket's state")

GameEvent = events.GameEvent
LobbyEvent = events.LobbyEvent
NotificationEvent = social.NotificationEvent
TableStatus = model.TableStatus
QuickPlayStatus = TicketStatus
