"""Security headers on every HTML response (GraphiQL, the web client, error pages), and
headers that are cheap and safe on every response."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
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
                headers = MutableHeaders(scope=message)
                extra = dict(EVERY_RESPONSE)
                if headers.get("content-type", "").startswith("text/html"):
                    extra.update(HTML_HEADERS)
                    extra["content-security-policy"] = CONTENT_SECURITY_POLICY.replace(
                        "connect-src 'self'", "connect-src 'self'" + connect_sources(scope)
                    )
                for name, value in extra.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
