"""`spades backup`, `restore` and `verify` on SQLite, against a server being played: a
backup taken while moves land is one consistent moment of the database, a restored
backup serves the same tables, a restore never overwrites a database in use by
accident, and verify names the table whose row no longer matches its move log."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.store.backup import backup
from tests.support.play import (
    SEATS,
    HumanTable,
    KeepAliveApi,
    game_over,
    kept_alive,
    lobby_ids,
    north_south_overbid,
    play_with_bots,
    sign_up_players,
    watching,
)
from tests.support.server import LiveServer

from .support import audit, execute, spades, spades_async, sqlite_url, table_versions

BACKUPS_WHILE_PLAYING = 5
# Nobody watches the tables once they are played: no bot may take an absent human's seat
# while the tests compare what the server and its backups hold.
PATIENT = {"SPADES_RECONNECT_SECONDS": "3600"}


@dataclass
class Played:
    """A server whose tables were played while backups were taken."""

    server: LiveServer
    humans_table: str
    bots_table: str
    players: dict[str, KeepAliveApi]  # the four humans' table, by seat
    host_of_bots: KeepAliveApi
    outsider: KeepAliveApi
    backups: list[Path] = field(default_factory=list)  # taken in-process, one after another
    command_backup: Path | None = None  # taken by `spades backup`
    command_backup_files: list[str] = field(default_factory=list)  # beside it, then
    command_backup_mode: str = ""  # its journal mode, then
    final: Path | None = None  # taken once nothing moved any more
    final_views: dict[str, Any] = field(default_factory=dict)  # what the server showed then

    def views(self) -> dict[str, Any]:
        """Every human's view of their table on the current server."""

        async def read() -> dict[str, Any]:
            views = {s: await p.game(self.humans_table) for s, p in self.players.items()}
            views["bots"] = await self.host_of_bots.game(self.bots_table)
            views["lobby"] = sorted(await lobby_ids(self.outsider))
            return views

        return asyncio.run(read())


def keep_backing_up(database: Path, folder: Path, taken: list[Path], stop: threading.Event) -> None:
    """Back the live database up again and again until told to stop."""
    while not stop.is_set():
        target = folder / f"while-playing-{len(taken)}.db"
        backup(database, target)
        taken.append(target)
        stop.wait(0.05)


async def play_while_backing_up(played: Played, folder: Path) -> None:
    server = played.server
    stop = threading.Event()
    backing_up = asyncio.create_task(
        asyncio.to_thread(keep_backing_up, server.database, folder, played.backups, stop)
    )
    command = folder / "by-command.db"
    by_command = asyncio.create_task(
        spades_async("backup", str(command), "--database-url", sqlite_url(server.database))
    )

    def enough(view: dict[str, Any]) -> bool:
        return game_over(view) or (
            by_command.done() and len(played.backups) >= BACKUPS_WHILE_PLAYING
        )

    humans = HumanTable(played.humans_table, played.players, choose_bid=north_south_overbid)
    host = played.host_of_bots
    async with (
        kept_alive(*played.players.values(), host),
        watching({"NORTH": host}, played.bots_table) as watchers,
    ):
        await asyncio.gather(
            humans.play_until(enough),
            play_with_bots(
                {"NORTH": host}, watchers, played.bots_table, lambda u: enough(u["view"])
            ),
        )
    stop.set()
    await backing_up
    ran = await by_command
    assert ran.code == 0, ran.err
    played.command_backup = command
    # As it was written (opening it with the server's settings would make it WAL again).
    played.command_backup_files = sorted(p.name for p in folder.glob("by-command*"))
    connection = sqlite3.connect(command)
    try:
        (played.command_backup_mode,) = connection.execute("PRAGMA journal_mode").fetchone()
    finally:
        connection.close()


def settle(database: Path) -> None:
    """Wait until the bots have made every move they owe (the humans no longer move)."""
    before = table_versions(database)
    while True:
        threading.Event().wait(0.5)
        now = table_versions(database)
        if now == before:
            return
        before = now


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path_factory.mktemp("server") / "spades.db", env=PATIENT)
    live.start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def played(server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    folder = tmp_path_factory.mktemp("backups")

    async def seat() -> Played:
        *humans, host, outsider = await sign_up_players(server, 6)
        humans_table = (await humans[0].create_table(name="humans", seed=7))["id"]
        for seat, player in zip(SEATS[1:], humans[1:], strict=True):
            await player.join(humans_table, seat)
        bots_table = (await host.create_table(name="bots", seed=21))["id"]
        for seat in SEATS[1:]:
            await host.add_bot(bots_table, seat)
        players = dict(zip(SEATS, humans, strict=True))
        return Played(server, humans_table, bots_table, players, host, outsider)

    played = asyncio.run(seat())
    asyncio.run(play_while_backing_up(played, folder))
    settle(server.database)
    played.final_views = played.views()
    played.final = folder / "final.db"
    backup(server.database, played.final)
    yield played


def test_backups_taken_while_moves_land_are_each_one_consistent_moment(played: Played) -> None:
    assert played.command_backup is not None
    taken = [*played.backups, played.command_backup]
    assert len(played.backups) >= BACKUPS_WHILE_PLAYING
    for copy in taken:
        tables, mismatches = asyncio.run(audit(sqlite_url(copy)))
        assert (tables, mismatches) == (2, []), copy.name
    # Moves landed between the backups: they caught the games at different moments.
    moments = [sum(table_versions(copy).values()) for copy in played.backups]
    assert moments == sorted(moments) and len(set(moments)) >= 3, moments

    ran = spades("verify", "--database-url", sqlite_url(played.command_backup))
    assert ran.code == 0, ran.err
    assert ran.out == ""
    assert "2 tables replayed from their move logs, all consistent" in ran.err


def test_a_backup_is_one_standalone_file(played: Played) -> None:
    assert played.command_backup_files == ["by-command.db"]
    assert played.command_backup_mode == "delete"


def test_a_backup_never_overwrites_a_file_unless_forced(played: Played) -> None:
    assert played.final is not None
    url = sqlite_url(played.server.database)
    before = played.final.read_bytes()
    ran = spades("backup", str(played.final), "--database-url", url)
    assert ran.code == 1 and "exists" in ran.err
    assert played.final.read_bytes() == before
    assert spades("backup", str(played.final), "--database-url", url, "--force").code == 0


def test_a_restored_backup_serves_the_same_tables(played: Played, tmp_path: Path) -> None:
    assert played.final is not None
    restored = tmp_path / "restored.db"
    ran = spades("restore", str(played.final), "--database-url", sqlite_url(restored))
    assert ran.code == 0, ran.err
    assert "(6 players, 2 tables)" in ran.err

    expected = played.final_views
    original = played.server
    again = LiveServer(restored, env=PATIENT)
    again.start()
    try:
        # The same players and tokens, now answered by the restored database.
        for api in (*played.players.values(), played.host_of_bots, played.outsider):
            api.server = again
        assert played.views() == expected
        assert played.bots_table in expected["lobby"]
    finally:
        for api in (*played.players.values(), played.host_of_bots, played.outsider):
            api.server = original
        again.stop()


def test_restore_refuses_a_database_that_holds_players_unless_forced(
    played: Played, tmp_path: Path
) -> None:
    assert played.final is not None
    target = tmp_path / "in-use.db"
    shutil.copy(played.final, target)  # a standalone file nobody has open
    url = sqlite_url(target)
    before = table_versions(target)

    ran = spades("restore", str(played.backups[0]), "--database-url", url)
    assert ran.code == 1
    assert "is not empty (6 players, 2 tables): pass --force to replace it" in ran.err
    assert table_versions(target) == before

    ran = spades("restore", str(played.backups[0]), "--database-url", url, "--force")
    assert ran.code == 0, ran.err
    assert table_versions(target) == table_versions(played.backups[0]) != before


def test_restore_refuses_a_file_that_is_not_a_spades_database(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    ran = spades("restore", str(junk), "--database-url", sqlite_url(tmp_path / "new.db"))
    assert ran.code == 1 and "not a sound SQLite database" in ran.err


def test_verify_names_each_table_whose_row_disagrees_with_its_move_log(
    played: Played, tmp_path: Path
) -> None:
    assert played.final is not None
    tampered = tmp_path / "tampered.db"
    shutil.copy(played.final, tampered)
    execute(tampered, "UPDATE tables SET version = version + 1 WHERE id = ?", played.humans_table)
    execute(
        tampered,
        # The first two seats' hands swapped: every count still adds up to 52 cards.
        "UPDATE tables SET game_state = json_set(game_state, '$.hand.hands[0]', "
        "json_extract(game_state, '$.hand.hands[1]'), '$.hand.hands[1]', "
        "json_extract(game_state, '$.hand.hands[0]')) WHERE id = ?",
        played.bots_table,
    )

    ran = spades("verify", "--database-url", sqlite_url(tampered))
    assert ran.code == 1
    version = table_versions(played.final)[played.humans_table]
    lines = {line.split(":", 1)[0]: line for line in ran.out.splitlines()}
    assert lines.keys() == {played.humans_table, played.bots_table}, ran.out
    assert lines[played.humans_table] == (
        f"{played.humans_table}: version: the row is at version {version + 1}, "
        f"the log ends at {version}"
    )
    assert lines[played.bots_table].startswith(
        f"{played.bots_table}: game: the row's game differs at hand.hands[0]"
    )
    assert "2 tables replayed from their move logs, 2 mismatches" in ran.err
