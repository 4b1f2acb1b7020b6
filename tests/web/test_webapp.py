"""The server serves the built client at `/`: hashed assets cached for good, index.html
revalidated every time and under a strict Content-Security-Policy, client routes answered
with index.html, `/graphql` unchanged. Uses a small stand-in build (no Node needed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.server import LiveServer

INDEX = (
    '<!doctype html><html lang="en"><head><title>Spades Online</title>'
    '<script type="module" crossorigin src="/assets/index-abc123.js"></script></head>'
    '<body><div id="app"></div></body></html>'
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    dist = root / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text(INDEX)
    (dist / "assets" / "index-abc123.js").write_text("console.log('spades');\n")
    (dist / "favicon.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (root / "secret.txt").write_text("outside the build")
    live = LiveServer(root / "spades.db", env={"SPADES_WEB_DIST": str(dist)})
    live.start()
    yield f"http://127.0.0.1:{live.port}"
    live.stop()


def test_index_is_never_cached_and_has_a_strict_policy(site: str) -> None:
    response = httpx.get(f"{site}/")
    assert response.status_code == 200
    assert response.text == INDEX
    assert response.headers["cache-control"] == "no-cache"
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy
    assert "frame-ancestors 'none'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"


def test_hashed_assets_are_cached_for_good(site: str) -> None:
    response = httpx.get(f"{site}/assets/index-abc123.js")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "javascript" in response.headers["content-type"]


def test_unhashed_files_are_revalidated(site: str) -> None:
    response = httpx.get(f"{site}/favicon.svg")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-cache"


@pytest.mark.parametrize("path", ["/table/abc123", "/friends", "/table/abc123?code=xyz"])
def test_client_routes_answer_the_page(site: str, path: str) -> None:
    response = httpx.get(f"{site}{path}")
    assert response.status_code == 200
    assert response.text == INDEX
    assert response.headers["cache-control"] == "no-cache"


@pytest.mark.parametrize(
    "path",
    ["/assets/index-old999.js", "/missing.css", "/..%2fsecret.txt", "/assets/../../secret.txt"],
)
def test_missing_files_and_escapes_are_not_found(site: str, path: str) -> None:
    response = httpx.get(f"{site}{path}")
    assert response.status_code == 404
    assert "outside the build" not in response.text


def test_graphql_is_unchanged(site: str) -> None:
    response = httpx.post(f"{site}/graphql", json={"query": "{ __typename }"})
    assert response.json() == {"data": {"__typename": "Query"}}
    page = httpx.get(f"{site}/graphql", headers={"accept": "text/html"})
    assert page.status_code == 200 and "graphiql" in page.text.lower()


def test_without_a_build_the_root_says_how_to_get_one(tmp_path: Path) -> None:
    live = LiveServer(tmp_path / "spades.db", env={"SPADES_WEB_DIST": str(tmp_path / "none")})
    live.start()
    try:
        response = httpx.get(f"http://127.0.0.1:{live.port}/")
        assert response.status_code == 404
        assert "not built" in response.text
        api = httpx.post(live.http_url, json={"query": "{ __typename }"})
        assert api.status_code == 200
    finally:
        live.stop()
