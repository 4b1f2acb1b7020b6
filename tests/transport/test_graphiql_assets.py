"""GraphiQL's assets ship with the package, pinned, and every HTML response carries the
security headers."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from app.api.transport.headers import SecurityHeaders
from tests.support.server import LiveServer

FOLDER = resources.files("app.api") / "static" / "graphiql"


def test_the_shipped_assets_are_the_pinned_ones() -> None:
    manifest = json.loads((FOLDER / "MANIFEST.json").read_text())
    assert manifest["packages"] == {"graphiql": "3.8.3", "react": "18.2.0", "react-dom": "18.2.0"}
    for name, entry in manifest["files"].items():
        digest = hashlib.sha256((FOLDER / name).read_bytes()).hexdigest()
        assert digest == entry["sha256"], name


def test_the_page_loads_nothing_from_another_origin() -> None:
    page = (FOLDER / "index.html").read_text() + (FOLDER / "page.js").read_text()
    assert "http://" not in page and "https://" not in page and "//unpkg" not in page
    assert "<script>" not in (FOLDER / "index.html").read_text()  # no inline script


async def test_graphiql_and_its_assets_are_served_by_the_server(server: LiveServer) -> None:
    base = server.http_url.removesuffix("/graphql")
    async with httpx.AsyncClient(timeout=10) as http:
        page = await http.get(server.http_url, headers={"accept": "text/html"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        for asset, kind in [
            ("graphiql.min.js", "text/javascript"),
            ("graphiql.min.css", "text/css"),
            ("react.production.min.js", "text/javascript"),
            ("react-dom.production.min.js", "text/javascript"),
            ("page.js", "text/javascript"),
        ]:
            assert f"/graphiql/{asset}" in page.text
            answer = await http.get(f"{base}/graphiql/{asset}")
            assert answer.status_code == 200 and answer.headers["content-type"].startswith(kind)
            assert answer.headers["x-content-type-options"] == "nosniff"
        for missing in ("MANIFEST.json", "nope.js", "..%2Fserver.py", "licenses"):
            assert (await http.get(f"{base}/graphiql/{missing}")).status_code == 404


async def test_every_html_response_gets_the_security_headers_and_json_the_basic_ones() -> None:
    async def html(_: Request) -> Response:
        return HTMLResponse("<!doctype html><p>any page, e.g. the web client</p>")

    async def own_policy(_: Request) -> Response:
        return HTMLResponse("<p>x</p>", headers={"content-security-policy": "default-src 'self'"})

    async def data(_: Request) -> Response:
        return JSONResponse({"ok": True})

    app = SecurityHeaders(
        Starlette(routes=[Route("/", html), Route("/own", own_policy), Route("/data", data)])
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://spades.test") as http:
        page = await http.get("/")
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp and "ws://spades.test" in csp
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["referrer-policy"] == "no-referrer"
        assert (await http.get("/own")).headers["content-security-policy"] == "default-src 'self'"
        json_answer = await http.get("/data")
        assert "content-security-policy" not in json_answer.headers
        assert json_answer.headers["x-content-type-options"] == "nosniff"
