"""GraphQL errors with the contract's `extensions.code`, and masking of the unexpected."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar, cast

from graphql import GraphQLError
from redis.exceptions import RedisError
from sqlalchemy.exc import DBAPIError

from app.rules.errors import ErrorCode, RuleError

log = logging.getLogger("app.api")

F = TypeVar("F", bound=Callable[..., Any])

INTERNAL_MESSAGE = "Internal server error"


def api_error(code: ErrorCode, message: str) -> GraphQLError:
    """A GraphQL error carrying one of the contract's codes."""
    return GraphQLError(message, extensions={"code": code.value})


UNAVAILABLE = "UNAVAILABLE"
UNAVAILABLE_MESSAGE = "the service is briefly unavailable (database or broker): nothing changed"
# Infrastructure failures: the request's transaction rolled back, so nothing changed.
# (ConnectionError and the drivers' socket errors are OSErrors.)
OUTAGES: tuple[type[BaseException], ...] = (DBAPIError, OSError, RedisError)


def _translate(exc: RuleError) -> GraphQLError:
    error = api_error(exc.code, exc.message)
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None and error.extensions is not None:
        error.extensions["retryAfter"] = retry_after  # seconds
    return error


def _outage(exc: BaseException) -> GraphQLError:
    log.warning("request failed on an outage: %s", exc)
    return GraphQLError(UNAVAILABLE_MESSAGE, extensions={"code": UNAVAILABLE})


def translate_errors(func: F) -> F:
    """Turn RuleErrors raised by a resolver (coroutine or async generator) into API errors."""
    if inspect.isasyncgenfunction(func):

        @functools.wraps(func)
        async def generator(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
            try:
                async for item in func(*args, **kwargs):
                    yield item
            except RuleError as exc:
                raise _translate(exc) from None
            except OUTAGES as exc:
                raise _outage(exc) from None

        return cast(F, generator)

    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await cast(Callable[..., Awaitable[Any]], func)(*args, **kwargs)
        except RuleError as exc:
            raise _translate(exc) from None
        except OUTAGES as exc:
            raise _outage(exc) from None

    return cast(F, wrapper)


def is_unexpected(error: GraphQLError) -> bool:
    """An error that did not come from our checks nor from GraphQL validation: a bug."""
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError)
