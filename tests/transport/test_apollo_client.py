"""Apollo Client 4 as its docs set it up (no type policies, automatic persisted queries,
graphql-ws) plays a whole hand against the server."""

from __future__ import annotations

from tests.support.server import LiveServer

from .clients import run_node


def test_apollo_client_with_persisted_queries_and_graphql_ws_plays_a_hand(
    server: LiveServer,
) -> None:
    result = run_node("apollo_play.mjs", server.http_url, server.ws_url, timeout=180)
    events, versions = result["events"], result["versions"]
    assert events[0] == "SNAPSHOT" and "HAND_SCORED" in events, result
    assert events.count("CARD_PLAYED") >= 52 and events.count("TRICK_WON") >= 13, events
    assert versions == list(range(versions[0], versions[0] + len(versions))), versions
    assert result["moves"] >= 14  # a bid and thirteen cards
    # Persisted queries: each operation is first sent by hash alone, answered
    # PERSISTED_QUERY_NOT_FOUND, then once with its text; from then on by hash only.
    requests = result["requests"]
    assert sum(r["notFound"] for r in requests) == 3  # Game, Bid, Play
    assert sum(r["withQuery"] for r in requests) == 3
    for index, request in enumerate(requests):
        if request["notFound"]:
            assert requests[index + 1]["withQuery"], requests  # the link's fallback
    assert len(requests) > 6
    assert requests[0]["method"] == "GET"  # hashed queries by GET, cacheable
    # The normalized cache keys every entity by its id with no configuration.
    assert result["cachedVersion"] == versions[-1]
    assert (result["cachedSeats"], result["cachedTeams"]) == (4, 2)
