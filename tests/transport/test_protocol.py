"""The lighter parts of uvicorn's WebSocket protocol (app/api/transport/uvicorn_websocket.py) keep
the behaviour of the asyncio.Queue and asyncio.Event they stand in for."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from uvicorn.config import Config
from uvicorn.server import ServerState

from app.api import fastpath, lifecycle
from app.api.serve import serve
from app.api.transport.uvicorn_http import CorkedHttpProtocol
from app.api.transport.uvicorn_websocket import Flag, LeanWebSocketProtocol, ReceivedEvents
from app.api.transport.writer import raw_protocol


async def test_received_events_come_out_in_the_order_they_were_put() -> None:
    events = ReceivedEvents()
    for n in range(3):
        events.put_nowait(n)
    assert events.qsize() == 3 and not events.empty()
    assert [await events.get() for _ in range(3)] == [0, 1, 2]
    assert events.empty()


async def test_a_reader_waiting_for_an_event_gets_it_when_it_is_put() -> None:
    events = ReceivedEvents()
    reader = asyncio.create_task(events.get())
    await asyncio.sleep(0)
    assert not reader.done()
    events.put_nowait("connect")
    assert await asyncio.wait_for(reader, 1) == "connect"


async def test_a_cancelled_reader_leaves_the_events_to_the_next() -> None:
    events = ReceivedEvents()
    reader = asyncio.create_task(events.get())
    await asyncio.sleep(0)
    reader.cancel()
    await asyncio.gather(reader, return_exceptions=True)
    events.put_nowait("receive")
    assert await asyncio.wait_for(events.get(), 1) == "receive"


@given(st.lists(st.integers(), max_size=20))
def test_received_events_keep_any_sequence_in_order(items: list[int]) -> None:
    async def run() -> list[int]:
        events = ReceivedEvents()
        for item in items:
            events.put_nowait(item)
        return [await events.get() for _ in items]

    assert asyncio.run(run()) == items


async def test_a_flag_wakes_every_waiter_when_set_and_not_before() -> None:
    flag = Flag()
    waiters = [asyncio.create_task(flag.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiters)
    flag.set()
    assert await asyncio.wait_for(asyncio.gather(*waiters), 1) == [True, True, True]
    assert flag.is_set()


async def test_a_cancelled_waiter_is_not_kept_by_the_flag() -> None:
    flag = Flag()
    waiter = asyncio.create_task(flag.wait())
    await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert not flag._waiters


async def test_a_set_flag_does_not_wait_and_a_cleared_one_does() -> None:
    flag = Flag(True)
    assert await asyncio.wait_for(flag.wait(), 1)
    flag.clear()
    waiter = asyncio.create_task(flag.wait())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    flag.set()
    assert await asyncio.wait_for(waiter, 1)


async def test_the_lean_protocol_is_what_the_socket_writer_writes_to_directly() -> None:
    config = Config(app=_no_app, ws_per_message_deflate=False)
    config.load()
    protocol = LeanWebSocketProtocol(config=config, server_state=ServerState(), app_state={})
    assert isinstance(protocol.queue, ReceivedEvents) and isinstance(protocol.writable, Flag)
    assert protocol.writable.is_set()  # as uvicorn's Event starts
    assert raw_protocol(protocol.send) is protocol


def _served(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fastpath_setting: str) -> Any:
    ran: dict[str, Any] = {}
    monkeypatch.setattr(lifecycle, "run", lambda config: ran.update(vars(config)))
    monkeypatch.setattr(fastpath._SWITCH, "on", fastpath._SWITCH.on)  # restored after
    monkeypatch.setenv("SPADES_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'spades.db'}")
    monkeypatch.setenv("SPADES_FASTPATH", fastpath_setting)
    serve()
    return ran


def test_the_server_runs_uvicorn_with_the_lean_protocol(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran = _served(monkeypatch, tmp_path, "on")
    assert ran["ws"] is LeanWebSocketProtocol
    assert ran["http"] is CorkedHttpProtocol


def test_without_the_fast_path_the_server_runs_uvicorns_own_protocols(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran = _served(monkeypatch, tmp_path, "off")
    assert (ran["ws"], ran["http"]) == ("websockets-sansio", "httptools")


async def _no_app(scope: Any, receive: Any, send: Any) -> None:
    return None
