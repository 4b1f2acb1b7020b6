"""The reference web client (`web/`, built by Vite into `web/dist`) served at `/`.

Vite names every asset after its content hash, so `/assets/*` is cached for a year as
immutable; `index.html` (and the other unhashed files) must be revalidated on every load
so a new build shows at once. Client routes (`/table/<id>`, `/friends`) answer index.html
and the client's router takes over. Nothing in the client is inline: the page runs under
the server's Content-Security-Policy (no 'unsafe-inline', no third-party origin).
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

# The Content-Security-Policy and the other security headers come from the server's
# middleware (app/api/transport/headers.py), as for every HTML page; the client needs
# nothing inline and no other origin, so it runs under that policy unchanged.
HTML_HEADERS = {"Cache-Control": REVALIDATE}

NOT_BUILT = (
    "The web client is not built. `scripts/serve` builds it when Node 20+ is installed "
    "(or run `npm --prefix web ci && npm --prefix web run build`). The API is at /graphql.\n"
)


def default_dist() -> Path:
    """`web/dist` beside the `app` package (the repository layout)."""
    return Path(__file__).resolve().parents[2] / "web" / "dist"


class WebClient:
    """Answers GET/HEAD for the built client from `dist`, read from disk on each request
    (a rebuild is served at once, without a restart)."""

    def __init__(self, dist: Path) -> None:
        self.dist = dist.resolve()

    def _file(self, path: str) -> Path | None:
        """The file under dist for a URL path, never one outside it."""
        if not path:
            return None
        candidate = (self.dist / path).resolve()
        if not candidate.is_relative_to(self.dist) or not candidate.is_file():
            return None
        return candidate

    async def endpoint(self, request: Request) -> Response:
        """A static file, or index.html for a client route."""
        path = request.path_params.get("path", "")
        index = self.dist / "index.html"
        if not index.is_file():
            return PlainTextResponse(NOT_BUILT, status_code=404)
        found = self._file(path)
        if found is not None and found != index:
            hashed = path.startswith("assets/")
            headers = {"Cache-Control": IMMUTABLE if hashed else REVALIDATE}
            return FileResponse(found, headers=headers)
        # A missing asset is a 404, not the page: a stale cached index asking for an
        # old hash must not get HTML as JavaScript.
        if path.startswith("assets/") or "." in path.rsplit("/", 1)[-1]:
            return PlainTextResponse("not found\n", status_code=404)
        return FileResponse(index, headers=HTML_HEADERS, media_type="text/html")


def web_routes(dist: Path | None) -> list[BaseRoute]:
    """The catch-all route of the web client; put it after every API route."""
    client = WebClient(dist or default_dist())
    return [Route("/{path:path}", client.endpoint, methods=["GET", "HEAD"])]
