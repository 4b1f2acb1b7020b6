"""Settings, read from environment variables in this one place."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from app.logs import LogFormat

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./spades.db"


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw is None or raw.strip() == "" else int(raw)


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return default if raw is None or raw.strip() == "" else float(raw)


def _bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


def _str(name: str, default: str | None) -> str | None:
    raw = os.environ.get(name)
    return default if raw is None or raw.strip() == "" else raw.strip()


# Request headers a cross-origin page may send (CORS preflight): auth and content type,
# plus what common clients and tracing libraries add (Apollo client awareness and CSRF
# header, Sentry, W3C trace context, request ids).
DEFAULT_CORS_ALLOW_HEADERS: tuple[str, ...] = (
    "authorization",
    "content-type",
    "accept",
    "apollographql-client-name",
    "apollographql-client-version",
    "apollo-require-preflight",
    "x-apollo-operation-name",
    "graphql-client-name",
    "graphql-client-version",
    "sentry-trace",
    "baggage",
    "traceparent",
    "tracestate",
    "x-request-id",
    "x-correlation-id",
    "x-requested-with",
)


def _list(name: str) -> tuple[str, ...] | None:
    raw = _str(name, None)
    return None if raw is None else tuple(p.strip() for p in raw.split(",") if p.strip())


@dataclass(frozen=True, slots=True)
class Settings:
    """Server settings. Every field has a sane default for the embedded setup."""

    database_url: str = DEFAULT_DATABASE_URL
    broker_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    bot_delay_ms: int = 0
    # EXPERT bots think in a process pool of this many workers, off the event loop.
    bot_workers: int = 1
    # The thinking time of one EXPERT decision (the search also stops at its playout cap).
    expert_ms: int = 50
    token_ttl_days: int = 30
    # Signs page cursors (HMAC). Unset: a random one per process, so cursors do not
    # survive a restart nor cross processes; several processes must share one.
    secret: str | None = None
    # argon2id cost; the defaults are argon2-cffi's (RFC 9106 low-memory profile).
    argon2_time_cost: int = 3
    argon2_memory_kib: int = 65536
    allowed_origins: tuple[str, ...] = ("*",)
    log_level: str = "info"
    # Plain text lines, or one JSON object a line with the request's fields (app/logs.py).
    log_format: LogFormat = LogFormat.TEXT
    # Lets createTable take a deal seed (tests, duplicate tournaments); off for live play.
    allow_seeded_tables: bool = False
    # Abuse limits (see SECURITY.md).
    introspection: bool = True
    rate_limits: bool = True
    max_body_bytes: int = 65_536
    max_ws_message_bytes: int = 65_536
    max_query_depth: int = 12
    max_query_tokens: int = 3_000
    max_aliases: int = 30
    max_query_cost: int = 50_000
    max_batch: int = 10
    ws_connections_per_player: int = 10
    subscriptions_per_player: int = 50
    # The built web client served at `/`; None: web/dist in the repository.
    web_dist: str | None = None
    # A WebSocket whose send waits this long (the client stopped reading) is closed with
    # 4410: it reconnects and resubscribes with `since` (app/api/transport/slow_consumers.py).
    ws_send_timeout_ms: int = 10_000
    # Transport (see SECURITY.md): CORS request headers, Apollo persisted queries kept
    # (LRU), and an optional trusted-documents manifest (JSON) outside of which no
    # operation runs.
    cors_allow_headers: tuple[str, ...] = DEFAULT_CORS_ALLOW_HEADERS
    persisted_queries: int = 1_000
    trusted_documents: str | None = None
    # A WebSocket that sends no connection_init this long is closed (4408), either protocol.
    ws_init_timeout_seconds: int = 60
    # How long after GAME_OVER the seated humans may ask for a rematch (docs/rules.md: 5 min).
    rematch_seconds: int = 300
    # Live tables (docs/rules.md). The timings are settings so tests can shorten them.
    reconnect_seconds: float = 60.0  # disconnected this long mid-game: a bot takes the seat
    presence_grace_seconds: float = 3.5  # a resubscription within this shows no change
    presence_heartbeat_seconds: float = 5.0  # Redis: how often a process says it is alive
    presence_ttl_seconds: float = 15.0  # Redis: a process silent this long is dead
    idle_table_seconds: float = 600.0  # a WAITING table with no connected human closes
    clock_sweep_seconds: float = 1.0  # how often each process looks for overdue deadlines
    turn_clock_scale: float = 1.0  # tests only: a turn lasts turnSeconds x this
    # Quick play (docs/rules.md): an unrated ticket's wait before bots take the seats
    # nobody took, and how often the process holding the matchmaking turn runs a wave.
    quickplay_bot_seconds: float = 15.0
    quickplay_wave_seconds: float = 1.0
    # The fast path around graphql-core, strawberry, starlette and uvicorn
    # (app/api/fastpath/): off runs every operation on the libraries' own path.
    fastpath: bool = True
    # How often each process looks for bans stored where it could not hear of them (the
    # `spades admin ban` command without a broker) and for seats banned players still hold.
    moderation_watch_seconds: float = 2.0
    # Graceful shutdown (SIGTERM, SIGINT): /readyz answers 503 at once, new connections are
    # still accepted this long (a load balancer takes the process out meanwhile), then
    # refused; the process is gone within `shutdown_seconds` of the signal.
    drain_seconds: float = 5.0
    shutdown_seconds: float = 30.0

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with the non-None `changes` applied (command-line flags win over env)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})  # type: ignore[arg-type]


def load_settings() -> Settings:
    """Settings from the `SPADES_*` environment variables."""
    base = Settings()
    origins = _str("SPADES_ALLOWED_ORIGINS", None)
    return Settings(
        database_url=_str("SPADES_DATABASE_URL", base.database_url) or base.database_url,
        broker_url=_str("SPADES_BROKER_URL", None),
        host=_str("SPADES_HOST", base.host) or base.host,
        port=_int("SPADES_PORT", base.port),
        bot_delay_ms=_int("SPADES_BOT_DELAY_MS", base.bot_delay_ms),
        bot_workers=_int("SPADES_BOT_WORKERS", base.bot_workers),
        expert_ms=_int("SPADES_EXPERT_MS", base.expert_ms),
        token_ttl_days=_int("SPADES_TOKEN_TTL_DAYS", base.token_ttl_days),
        secret=_str("SPADES_SECRET", None),
        argon2_time_cost=_int("SPADES_ARGON2_TIME_COST", base.argon2_time_cost),
        argon2_memory_kib=_int("SPADES_ARGON2_MEMORY_KIB", base.argon2_memory_kib),
        allowed_origins=(
            tuple(o.strip() for o in origins.split(",") if o.strip())
            if origins
            else base.allowed_origins
        ),
        log_level=_str("SPADES_LOG_LEVEL", base.log_level) or base.log_level,
        log_format=LogFormat((_str("SPADES_LOG_FORMAT", None) or base.log_format.value).lower()),
        allow_seeded_tables=_bool("SPADES_ALLOW_SEEDED_TABLES", False),
        introspection=_bool("SPADES_INTROSPECTION", base.introspection),
        rate_limits=_bool("SPADES_RATE_LIMITS", base.rate_limits),
        max_body_bytes=_int("SPADES_MAX_BODY_BYTES", base.max_body_bytes),
        max_ws_message_bytes=_int("SPADES_MAX_WS_MESSAGE_BYTES", base.max_ws_message_bytes),
        max_query_depth=_int("SPADES_MAX_QUERY_DEPTH", base.max_query_depth),
        max_query_tokens=_int("SPADES_MAX_QUERY_TOKENS", base.max_query_tokens),
        max_aliases=_int("SPADES_MAX_ALIASES", base.max_aliases),
        max_query_cost=_int("SPADES_MAX_QUERY_COST", base.max_query_cost),
        max_batch=_int("SPADES_MAX_BATCH", base.max_batch),
        ws_connections_per_player=_int(
            "SPADES_WS_CONNECTIONS_PER_PLAYER", base.ws_connections_per_player
        ),
        subscriptions_per_player=_int(
            "SPADES_SUBSCRIPTIONS_PER_PLAYER", base.subscriptions_per_player
        ),
        web_dist=_str("SPADES_WEB_DIST", None),
        ws_send_timeout_ms=_int("SPADES_WS_SEND_TIMEOUT_MS", base.ws_send_timeout_ms),
        cors_allow_headers=_list("SPADES_CORS_ALLOW_HEADERS") or base.cors_allow_headers,
        persisted_queries=_int("SPADES_PERSISTED_QUERIES", base.persisted_queries),
        trusted_documents=_str("SPADES_TRUSTED_DOCUMENTS", None),
        ws_init_timeout_seconds=_int(
            "SPADES_WS_INIT_TIMEOUT_SECONDS", base.ws_init_timeout_seconds
        ),
        rematch_seconds=_int("SPADES_REMATCH_SECONDS", base.rematch_seconds),
        reconnect_seconds=_float("SPADES_RECONNECT_SECONDS", base.reconnect_seconds),
        presence_grace_seconds=_float("SPADES_PRESENCE_GRACE_SECONDS", base.presence_grace_seconds),
        presence_heartbeat_seconds=_float(
            "SPADES_PRESENCE_HEARTBEAT_SECONDS", base.presence_heartbeat_seconds
        ),
        presence_ttl_seconds=_float("SPADES_PRESENCE_TTL_SECONDS", base.presence_ttl_seconds),
        idle_table_seconds=_float("SPADES_IDLE_TABLE_SECONDS", base.idle_table_seconds),
        clock_sweep_seconds=_float("SPADES_CLOCK_SWEEP_SECONDS", base.clock_sweep_seconds),
        turn_clock_scale=_float("SPADES_TURN_CLOCK_SCALE", base.turn_clock_scale),
        quickplay_bot_seconds=_float("SPADES_QUICKPLAY_BOT_SECONDS", base.quickplay_bot_seconds),
        quickplay_wave_seconds=_float("SPADES_QUICKPLAY_WAVE_SECONDS", base.quickplay_wave_seconds),
        fastpath=_bool("SPADES_FASTPATH", base.fastpath),
        moderation_watch_seconds=_float(
            "SPADES_MODERATION_WATCH_SECONDS", base.moderation_watch_seconds
        ),
        drain_seconds=_float("SPADES_DRAIN_SECONDS", base.drain_seconds),
        shutdown_seconds=_float("SPADES_SHUTDOWN_SECONDS", base.shutdown_seconds),
    )
