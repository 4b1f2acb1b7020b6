"""Security headers on every HTML response (GraphiQL, the web client, error pages), and
headers that are cheap and safe on every response."""

from __future__ import annotations

from operator import itemgetter

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Pages load only their own scripts, styles and fonts, and talk only to their own origin
# (HTTP and WebSocket: 'self' covers ws: and wss: of the same host in current browsers;
# they are named too for older ones). GraphiQL's CSS embeds its fonts and icons as data:
# URIs. No inline script or style at all (the browser test watches for violations).
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "font-src 'self' data:",
        "img-src 'self' data:",
        "connect-src 'self'",
        "manifest-src 'self'",
        "worker-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

HTML_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}
EVERY_RESPONSE = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def connect_sources(scope: Scope) -> str:
    """The WebSocket origins of this host, named for browsers whose 'self' does not
    cover ws:/wss:."""
    host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
    if not host or any(c in host for c in " ;,'\""):
        return ""
    return f" ws://{host} wss://{host}"


_EVERY_RESPONSE = tuple(
    (n.encode("latin-1"), v.encode("latin-1")) for n, v in EVERY_RESPONSE.items()
)
_HTML_HEADERS = tuple((n.encode("latin-1"), v.encode("latin-1")) for n, v in HTML_HEADERS.items())
_CSP = b"content-security-policy"
# In the order the headers were always added: the policy first of the HTML ones.
_HTML_BESIDE_POLICY = tuple(header for header in _HTML_HEADERS if header[0] != _CSP)


def add_security_headers(message: Message, scope: Scope) -> None:
    """Add the security headers the response start `message` lacks (its header list
    replaced by a copy, as starlette's MutableHeaders did)."""
    raw = list(message.get("headers") or ())
    message["headers"] = raw
    secure_raw_headers(raw, scope)


def secure_raw_headers(raw: list[tuple[bytes, bytes]], scope: Scope) -> None:
    """Append to a response's raw headers the security headers they lack. Names are
    compared as given (ASGI's are lowercase), as starlette's MutableHeaders compared
    them; every move's answer passes here, and the raw list costs no Python call per
    header."""
    present = set(map(itemgetter(0), raw))
    html = False
    for name, value in raw:
        if name == b"content-type":
            html = value.startswith(b"text/html")
            break
    extra = _EVERY_RESPONSE
    if html:
        policy = CONTENT_SECURITY_POLICY.replace(
            "connect-src 'self'", "connect-src 'self'" + connect_sources(scope)
        )
        extra = (*_EVERY_RESPONSE, (_CSP, policy.encode("latin-1")), *_HTML_BESIDE_POLICY)
    for name, value in extra:
        if name not in present:
            raw.append((name, value))


class SecurityHeaders:
    """Adds the security headers: on HTML responses the Content-Security-Policy (with
    frame-ancestors 'none') and X-Frame-Options; on every response
    X-Content-Type-Options and Referrer-Policy. A header the app set itself wins."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                add_security_headers(message, scope)
            await send(message)

        await self.app(scope, receive, send_with_headers)
