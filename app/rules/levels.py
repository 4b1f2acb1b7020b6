"""Bot levels: how strong a bot plays (docs/rules.md, "Bot levels")."""

from __future__ import annotations

from enum import StrEnum


class BotLevel(StrEnum):
    """A bot's level. BASIC is the rulebook's reference bot and the default."""

    BASIC = "BASIC"
    STANDARD = "STANDARD"
    EXPERT = "EXPERT"


DEFAULT_BOT_LEVEL = BotLevel.BASIC
