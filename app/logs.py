"""The server's log lines: plain text by default, or one JSON object a line on standard
error (`SPADES_LOG_FORMAT=json`, python-json-logger) with `time`, `level`, `logger`,
`message`, and, where they apply, `request_id`, `operation`, `player_id` and `table_id`.

Those four come from context variables: the GraphQL layer attaches its request's
fields when it takes a request or a WebSocket (`attach_request`) and an operation's
when it runs one (`attach_operation`); every line logged while they are current, by
the server's code or a library's, carries them. Asyncio tasks start with a copy of the
context of whoever started them, so a line logged by work a request set off (a bot's
move after a player's) carries that request's fields.

Some loggers are held at WARNING whatever the level: SQLAlchemy and aiosqlite log every
statement's parameters below it, and those hold password and token hashes and every
hand of every game (a stored game is its unplayed cards).
"""

from __future__ import annotations

import logging
import logging.config
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

# Loggers that would print statements' parameters (secrets, hands) below WARNING.
QUIET_LOGGERS = ("sqlalchemy", "aiosqlite")
# Record attributes that are no field of a line (uvicorn adds a coloured copy of some).
_NOT_FIELDS = (*RESERVED_ATTRS, "color_message", "taskName")
FIELDS = ("request_id", "operation", "player_id", "table_id")


class LogFormat(Enum):
    """How log lines are written."""

    TEXT = "text"
    JSON = "json"


class RequestFields(Protocol):
    """What a request knows of itself for its log lines (the GraphQL layer's)."""

    def log_fields(self) -> Mapping[str, str | None]:
        """`request_id`, `player_id` and, before any operation ran, `operation` and
        `table_id` (None where they do not apply)."""
        ...


@dataclass(frozen=True, slots=True)
class OperationFields:
    """The operation running now: its name and the table it is about, if any."""

    operation: str | None
    table_id: str | None


_REQUEST: ContextVar[RequestFields | None] = ContextVar("spades_log_request", default=None)
_OPERATION: ContextVar[OperationFields | None] = ContextVar("spades_log_operation", default=None)


def attach_request(fields: RequestFields) -> None:
    """Lines logged from now on in this task (and tasks it starts) carry `fields`."""
    _REQUEST.set(fields)


def attach_operation(operation: str | None, table_id: str | None) -> None:
    """Lines logged from now on in this task carry this operation and table."""
    _OPERATION.set(OperationFields(operation, table_id))


def current_fields() -> dict[str, str]:
    """The context fields a line logged here and now carries."""
    fields: dict[str, str] = {}
    request = _REQUEST.get()
    if request is not None:
        fields.update((k, v) for k, v in request.log_fields().items() if v is not None)
    operation = _OPERATION.get()
    if operation is not None:
        for name, value in (("operation", operation.operation), ("table_id", operation.table_id)):
            if value is not None:
                fields[name] = value
    return fields


class ContextFields(logging.Filter):
    """Adds the request's and the operation's fields to every record it passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in current_fields().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


def json_formatter() -> logging.Formatter:
    """One JSON object a line: time (ISO-8601, UTC), level, logger, message, then the
    context fields and anything a call passed as `extra`."""
    return JsonFormatter(
        "{message}{levelname}{name}",
        style="{",
        rename_fields={"levelname": "level", "name": "logger"},
        timestamp="time",
        reserved_attrs=_NOT_FIELDS,
    )


def logging_config(level: str, fmt: LogFormat) -> dict[str, Any]:
    """The `logging.config.dictConfig` of a process: everything, uvicorn's loggers
    included, through one handler on standard error, in `fmt`."""
    formatter: dict[str, Any] = (
        {"()": "app.logs.json_formatter"}
        if fmt is LogFormat.JSON
        else {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    )
    own_handler = {"handlers": [], "propagate": True}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "app.logs.ContextFields"}},
        "formatters": {"line": formatter},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "line",
                "filters": ["context"],
            }
        },
        "root": {"level": level.upper(), "handlers": ["stderr"]},
        "loggers": {
            # uvicorn's own handlers are dropped: its lines go through the one above.
            "uvicorn": own_handler,
            "uvicorn.error": own_handler,
            "uvicorn.access": own_handler,
            **{name: {"level": "WARNING"} for name in QUIET_LOGGERS},
        },
    }


def configure(level: str, fmt: LogFormat) -> dict[str, Any]:
    """Set this process's logging up; returns the configuration (for uvicorn to apply
    in each worker process it starts)."""
    config = logging_config(level, fmt)
    logging.config.dictConfig(config)
    return config
