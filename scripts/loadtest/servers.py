"""The servers a run measures: `spades serve` processes (SQLite by default, or a fresh
PostgreSQL database + Redis), started from a build (this work tree, or a baseline
commit's worktree in compare mode)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT = 30.0
MIGRATE_TIMEOUT = 120.0

# --postgres / --processes N > 1: one fresh database on this server, one Redis.
PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_USER = "postgres"
PG_MAINTENANCE_DB = "test"  # where CREATE/DROP DATABASE run
PG_TIMEOUT = 30.0
# Another Redis (several suites or runs at once on one machine): SPADES_LOADTEST_REDIS,
# else the test suite's (SPADES_TEST_REDIS).
REDIS_URL = os.environ.get(
    "SPADES_LOADTEST_REDIS", os.environ.get("SPADES_TEST_REDIS", "redis://127.0.0.1:6379/0")
)


@dataclass(frozen=True)
class Build:
    """Which server code runs: a source tree and its venv's `spades` command."""

    root: Path
    spades: Path

    @classmethod
    def here(cls) -> Build:
        """This work tree, with the venv running this script."""
        executable = Path(sys.executable).parent / "spades"
        if not executable.exists():
            executable = ROOT / ".venv" / "bin" / "spades"
        return cls(ROOT, executable)

    @classmethod
    def of_spades(cls, spades: Path) -> Build:
        """The build whose venv (ROOT/.venv/bin/spades) holds this `spades` command."""
        return cls(spades.resolve().parents[2], spades)


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the load generator dies (Linux prctl), best effort."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def server_env(log_level: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a started server (and of `spades migrate`)."""
    return {
        **os.environ,
        "SPADES_ARGON2_TIME_COST": "1",
        "SPADES_ARGON2_MEMORY_KIB": "1024",
        "SPADES_ALLOW_SEEDED_TABLES": "1",
        # 1,000 sign-ups from 127.0.0.1 would trip the per-IP sign-up limit.
        "SPADES_RATE_LIMITS": "0",
        "SPADES_LOG_LEVEL": log_level,
        **(extra or {}),
    }


class ServerProcess:
    """`spades serve` on a free port: by default with a temporary SQLite file, or with the
    given database URL and extra environment (PostgreSQL + Redis)."""

    def __init__(
        self,
        log_level: str,
        database_url: str | None = None,
        extra_env: dict[str, str] | None = None,
        build: Build | None = None,
        command: list[str] | None = None,
    ) -> None:
        self.build = build or Build.here()
        # What runs `serve ...`: the build's `spades` (or, e.g., a probe around it).
        self.command = command or [str(self.build.spades)]
        self.port = free_port()
        self.directory = tempfile.TemporaryDirectory(prefix="spades-loadtest-")
        self.database = Path(self.directory.name) / "loadtest.db"
        self.database_url = database_url or f"sqlite+aiosqlite:///{self.database}"
        self.extra_env = extra_env or {}
        self.log_path = Path(self.directory.name) / "server.log"
        self.log_level = log_level
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The GraphQL endpoint."""
        return f"http://127.0.0.1:{self.port}/graphql"

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self.process.pid if self.process is not None else None

    def launch(self) -> None:
        """Start the server process (without waiting for it)."""
        command = [
            *self.command,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--database-url",
            self.database_url,
        ]
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child process writes to it
        try:
            self.process = subprocess.Popen(
                command,
                cwd=self.build.root,
                env=server_env(self.log_level, self.extra_env),
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,  # no threads exist yet
            )
        finally:
            log.close()

    def wait_healthy(self, deadline: float) -> None:
        """Wait (until the monotonic `deadline`) for /healthz to answer."""
        assert self.process is not None
        health = f"http://127.0.0.1:{self.port}/healthz"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited at start:\n{self.tail_log()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(health, timeout=1, trust_env=False).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"the server did not answer /healthz in time:\n{self.tail_log()}")

    def start(self) -> None:
        """Start the server and wait (bounded) until /healthz answers."""
        self.launch()
        self.wait_healthy(time.monotonic() + SERVER_START_TIMEOUT)

    def tail_log(self, chars: int = 3000) -> str:
        """The end of what the server printed."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s; remove the temporary files. Idempotent."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self.directory.cleanup()


CALLPROBE = Path(__file__).resolve().with_name("callprobe.py")


def counting_command(build: Build) -> list[str]:
    """The command that runs `serve ...` of `build` counting its Python calls."""
    return [str(build.spades.parent / "python"), str(CALLPROBE)]


STALLPROBE = Path(__file__).resolve().with_name("stallprobe.py")


def stall_probe_command(build: Build) -> list[str]:
    """The command that runs `serve ...` of `build` watched for event-loop stalls."""
    return [str(build.spades.parent / "python"), str(STALLPROBE)]


async def read_calls(server: ServerProcess, timeout: float = 30.0) -> int | None:
    """The Python calls a counting server made so far (None if it does not count)."""
    out = Path(server.extra_env.get("SPADES_CALLPROBE_OUT", ""))
    if not out.name or server.process is None:
        return None
    out.unlink(missing_ok=True)
    server.process.send_signal(signal.SIGUSR1)
    for _ in range(int(timeout / 0.05)):
        if out.exists():
            return int(out.read_text(encoding="ascii"))
        await asyncio.sleep(0.05)
    return None


def stop_servers(servers: list[ServerProcess]) -> None:
    """SIGTERM every server at once, then wait for each (SIGKILL after 10 s). Idempotent."""
    for server in servers:
        if server.process is not None and server.process.poll() is None:
            with contextlib.suppress(OSError):
                server.process.send_signal(signal.SIGTERM)
    for server in servers:
        with contextlib.suppress(Exception):
            server.stop()


class PostgresDatabase:
    """A fresh PostgreSQL database for one run (created and dropped as user `postgres`,
    through the maintenance database `test`, over 127.0.0.1 with trust auth)."""

    def __init__(self) -> None:
        self.name = f"spades_loadtest_{secrets.token_hex(4)}"
        self.created = False

    @property
    def url(self) -> str:
        """The SQLAlchemy URL the servers use."""
        return f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{self.name}"

    async def _execute(self, sql: str) -> None:
        import asyncpg  # type: ignore[import-untyped]

        connection = await asyncpg.connect(
            host=PG_HOST,
            port=PG_PORT,
            user=PG_USER,
            database=PG_MAINTENANCE_DB,
            timeout=PG_TIMEOUT,
        )
        try:
            await connection.execute(sql, timeout=PG_TIMEOUT)
        finally:
            await connection.close(timeout=PG_TIMEOUT)

    def create(self) -> None:
        """CREATE DATABASE (the name is ours: lowercase hex, no quoting issue)."""
        self.created = True  # from now on drop() tries (IF EXISTS), even if interrupted
        try:
            asyncio.run(asyncio.wait_for(self._execute(f'CREATE DATABASE "{self.name}"'), 60))
        except (OSError, TimeoutError):
            raise
        except Exception as exc:  # asyncpg's own errors
            raise RuntimeError(f"could not create database {self.name}: {exc}") from exc

    def drop(self) -> None:
        """DROP DATABASE ... WITH (FORCE), if created; best effort, bounded. Idempotent."""
        if not self.created:
            return
        sql = f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'
        try:
            asyncio.run(asyncio.wait_for(self._execute(sql), 60))
        except Exception as exc:  # report, never hide the run's own result
            print(f"note: could not drop database {self.name}: {exc}", file=sys.stderr)
            return
        self.created = False

    def migrate(self, log_level: str, build: Build) -> None:
        """`spades migrate` once, before any server starts (so the servers do not race)."""
        command = [str(build.spades), "migrate", "--database-url", self.url]
        env = server_env(log_level, {"SPADES_DATABASE_URL": self.url})
        done = subprocess.run(
            command,
            cwd=build.root,
            env=env,
            capture_output=True,
            timeout=MIGRATE_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")[-2000:]
            raise RuntimeError(f"spades migrate failed ({done.returncode}):\n{output}")
