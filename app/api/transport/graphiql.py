"""GraphiQL served entirely by this server: the page and its pinned assets (see
app/api/static/graphiql/MANIFEST.json), so it works offline and under a strict CSP."""

from __future__ import annotations

from functools import cache
from importlib import resources

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

ASSET_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
# The assets change only with the package: a day of caching, revalidated after.
ASSET_CACHE = "public, max-age=86400"


@cache
def _asset(name: str) -> bytes | None:
    """A file of the GraphiQL folder (top level only), or None."""
    if "/" in name or name.startswith("."):
        return None
    folder = resources.files("app.api") / "static" / "graphiql"
    path = folder / name
    return path.read_bytes() if path.is_file() else None


def graphiql_page() -> HTMLResponse:
    """The GraphiQL page (its security headers come from the SecurityHeaders middleware)."""
    page = _asset("index.html")
    assert page is not None, "app/api/static/graphiql/index.html is part of the package"
    return HTMLResponse(page, headers={"cache-control": "no-cache"})


async def graphiql_asset(request: Request) -> Response:
    """One of GraphiQL's scripts or stylesheets."""
    name = str(request.path_params["name"])
    media_type = next((t for ext, t in ASSET_TYPES.items() if name.endswith(ext)), None)
    body = _asset(name) if media_type else None
    if body is None or media_type is None:
        return PlainTextResponse("not found", status_code=404)
    return Response(body, media_type=media_type, headers={"cache-control": ASSET_CACHE})


ROUTES = [Route("/graphiql/{name}", graphiql_asset, methods=["GET", "HEAD"])]
