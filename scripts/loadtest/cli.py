"""Command line: flags, the named scenario, the event loop, the servers, the report."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from websockets.exceptions import WebSocketException

from .harness import ApiError, stub_sniffio
from .measure import calibration_line, calibration_us
from .run import DRAIN_TIMEOUT, MAX_DURATION, report, run
from .scenarios import SCENARIOS, describe
from .servers import (
    REDIS_URL,
    SERVER_START_TIMEOUT,
    Build,
    PostgresDatabase,
    ServerProcess,
    counting_command,
    free_port,
    stall_probe_command,
    stop_servers,
)

T = TypeVar("T")


def _scratch(name: str) -> str:
    """A path for a probe's output in the system's temporary directory."""
    return str(Path(tempfile.gettempdir()) / name)


LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
MAX_PROCESSES = 16
SETUP_BUDGET = 300.0  # plus 0.5 s per table: the hard deadline of the whole run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line flags."""
    parser = argparse.ArgumentParser(
        prog="loadtest",
        description="Load test: K tables x 4 WebSocket players (and spectators) against "
        "Spades servers.",
        epilog="scenarios:\n" + describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "scenario", nargs="?", choices=sorted(SCENARIOS), help="a named load (see below)"
    )
    parser.add_argument("--tables", type=int, default=None, help="concurrent tables (K)")
    parser.add_argument("--rate", type=float, default=None, help="moves/s per table")
    parser.add_argument("--duration", type=float, default=None, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured seconds first")
    parser.add_argument(
        "--saturate", action="store_true", help="each table moves as fast as it can"
    )
    parser.add_argument("--idle", action="store_true", help="sockets subscribed, no moves")
    parser.add_argument("--spectators", type=int, default=None, help="spectators per table")
    parser.add_argument("--lobby", action="store_true", help="players also on lobbyUpdates")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply the scenario's tables and spectators"
    )
    parser.add_argument(
        "--loadgen-gc",
        choices=("off", "on"),
        default="off",
        help="the load generator's own GC while measuring (frozen after setup either way)",
    )
    parser.add_argument(
        "--compare",
        default=None,
        metavar="COMMIT",
        help="run COMMIT's server (built in a temporary worktree with its own venv) and "
        "this work tree's alternately, same load, and print the ratios",
    )
    parser.add_argument("--rounds", type=int, default=2, help="compare: runs of each build")
    parser.add_argument(
        "--keep-baseline",
        action="store_true",
        help="compare: keep (and reuse) the baseline's worktree and venv",
    )
    parser.add_argument(
        "--spades",
        default=None,
        help="the `spades` command of the build to start (default: this venv's)",
    )
    parser.add_argument("--build-label", default="work tree", help="names the build")
    parser.add_argument(
        "--count-calls",
        action="store_true",
        help="count the server's Python calls per move (a profiler: slows it down; a "
        "figure a crowded machine does not distort)",
    )
    parser.add_argument(
        "--stall-probe",
        type=float,
        default=None,
        metavar="MS",
        help="record the server's event-loop stalls longer than MS, with the stacks that "
        "ran meanwhile (scripts/loadtest/stallprobe.py), in a file named in the report",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="server processes sharing one PostgreSQL database and Redis (N > 1 implies "
        "--postgres); the players of a table are spread over them round-robin",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="run the started server(s) on a fresh PostgreSQL database + Redis, not SQLite",
    )
    parser.add_argument("--url", default=None, help="a running server's http://127.0.0.1:P/graphql")
    parser.add_argument("--server-pid", type=int, default=None, help="its PID, for RSS/CPU")
    parser.add_argument("--server-log-level", default="warning", help="for the started server")
    parser.add_argument("--setup-concurrency", type=int, default=32)
    parser.add_argument("--random-deals", action="store_true", help="unseeded tables")
    parser.add_argument(
        "--lockstep",
        action="store_true",
        help="no spreading: all tables start their hands together (tricks and hands end in "
        "the same second everywhere)",
    )
    parser.add_argument("--no-uvloop", action="store_true")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument(
        "--samples",
        default=None,
        metavar="CSV",
        help="write every measured move: start (s into the window), latency ms, HTTP ms",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--py-spy",
        default=None,
        metavar="OUT",
        help="py-spy record (--gil) the server over the measured window (.svg, .json, else raw)",
    )
    args = parser.parse_args(argv)
    apply_scenario(args)
    if not 1 <= args.tables <= 5000:
        parser.error("--tables must be between 1 and 5000")
    if not 0 < args.rate <= 100:
        parser.error("--rate must be in (0, 100]")
    if not 0 < args.duration <= MAX_DURATION or not 0 <= args.warmup <= 600:
        parser.error("--duration must be in (0, 3600], --warmup in [0, 600]")
    if not 0 <= args.spectators <= 5000 or args.rounds < 1 or args.scale <= 0:
        parser.error("--spectators must be in [0, 5000], --rounds >= 1, --scale > 0")
    if args.setup_concurrency < 1:
        parser.error("--setup-concurrency must be at least 1")
    if not 1 <= args.processes <= MAX_PROCESSES:
        parser.error(f"--processes must be between 1 and {MAX_PROCESSES}")
    if args.processes > 1:
        args.postgres = True
    if args.url is not None and args.postgres:
        parser.error("--url uses a running server: no --postgres, no --processes N > 1")
    if args.url is not None:
        parts = urlsplit(args.url)
        if parts.scheme != "http" or parts.hostname not in LOCAL_HOSTS:
            parser.error("--url must be http://127.0.0.1:PORT/graphql (local targets only)")
    return args


def apply_scenario(args: argparse.Namespace) -> None:
    """Fill the flags not given from the named scenario (or the plain defaults)."""
    scenario = SCENARIOS.get(args.scenario) if args.scenario else None
    if scenario is None:
        args.tables = 250 if args.tables is None else args.tables
        args.rate = 1.0 if args.rate is None else args.rate
        args.duration = 30.0 if args.duration is None else args.duration
        args.spectators = args.spectators or 0
        return
    if args.tables is None:
        args.tables = max(1, round(scenario.tables * args.scale))
    if args.spectators is None:
        args.spectators = round(scenario.spectators * args.scale)
    args.rate = scenario.rate if args.rate is None else args.rate
    args.duration = scenario.duration if args.duration is None else args.duration
    args.saturate = args.saturate or scenario.saturate
    args.idle = args.idle or scenario.idle
    args.lobby = args.lobby or scenario.lobby


def raise_fd_limit(needed: int) -> None:
    """Raise the open-files soft limit (inherited by the server we start)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = hard if hard == resource.RLIM_INFINITY else min(hard, max(needed, soft))
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def run_loop(main: Coroutine[Any, Any, T], use_uvloop: bool) -> tuple[T, str]:
    """Run `main` on uvloop when available (and wanted), else on asyncio's loop."""
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                return runner.run(main), "uvloop"
    with asyncio.Runner() as runner:
        return runner.run(main), "asyncio"


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = parse_args(argv)
    if args.compare:
        from .compare import compare

        return compare(args, sys.argv[1:] if argv is None else argv)
    stub_sniffio()
    raise_fd_limit((4 + args.spectators) * args.tables * 2 + 2048)
    build = Build.here() if args.spades is None else Build.of_spades(Path(args.spades))
    calibration = calibration_us()
    print(calibration_line(calibration), file=sys.stderr)

    def on_term(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    servers: list[ServerProcess] = []
    database: PostgresDatabase | None = None
    try:
        if args.url is None:
            extra_env: dict[str, str] = {}
            if args.postgres:
                database = PostgresDatabase()
                print(f"creating database {database.name} ...", file=sys.stderr)
                database.create()
                database.migrate(args.server_log_level, build)
                extra_env = {"SPADES_DATABASE_URL": database.url, "SPADES_BROKER_URL": REDIS_URL}
                backend = f"PostgreSQL ({database.name}) + Redis ({REDIS_URL})"
            else:
                backend = "SQLite (temporary file)"
            ports: set[int] = set()
            for _ in range(args.processes):
                env = dict(extra_env)
                command = None
                if args.count_calls:
                    calls = _scratch(f"spades-calls-{secrets.token_hex(6)}.txt")
                    env["SPADES_CALLPROBE_OUT"] = calls
                    command = counting_command(build)
                elif args.stall_probe is not None:
                    stalls = _scratch(f"spades-stalls-{secrets.token_hex(6)}.jsonl")
                    env["SPADES_STALLPROBE_OUT"] = stalls
                    env["SPADES_STALLPROBE_MS"] = str(args.stall_probe)
                    command = stall_probe_command(build)
                    print(f"server stalls over {args.stall_probe:g} ms: {stalls}", file=sys.stderr)
                server = ServerProcess(
                    args.server_log_level,
                    database.url if database else None,
                    env,
                    build,
                    command,
                )
                servers.append(server)
                for _attempt in range(100):  # distinct free ports, bounded
                    if server.port not in ports:
                        break
                    server.port = free_port()
                ports.add(server.port)
            for server in servers:
                print(f"starting a server on 127.0.0.1:{server.port} ...", file=sys.stderr)
                server.launch()
            start_deadline = time.monotonic() + SERVER_START_TIMEOUT * len(servers)
            for server in servers:
                server.wait_healthy(start_deadline)
            pids = [server.pid for server in servers if server.pid is not None]
            print(f"  server PID{'s' if len(pids) > 1 else ''} {pids}", file=sys.stderr)
            urls = [server.url for server in servers]
        else:
            urls = [args.url]
            pids = [args.server_pid] if args.server_pid is not None else []
            backend = "running server (--url)"
        deadline = SETUP_BUDGET + args.tables * (0.5 + 0.05 * args.spectators) + args.warmup
        deadline += args.duration + DRAIN_TIMEOUT
        result, loop_name = run_loop(
            asyncio.wait_for(
                run(args, urls, pids, backend, args.build_label, calibration, servers),
                deadline,
            ),
            not args.no_uvloop,
        )
        result["calibration_us_after"] = calibration_us()
        for server in servers:
            if server.process is not None and server.process.poll() is not None:
                result["errors"]["server exited during the run"] = (
                    result["errors"].get("server exited during the run", 0) + 1
                )
        print(report(result, args, loop_name))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        for server in servers:
            tail = server.tail_log(1500).strip()
            if tail:
                print(f"\nserver log (tail, port {server.port}):\n{tail}", file=sys.stderr)
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (
        ApiError,
        OSError,
        TimeoutError,
        WebSocketException,
        RuntimeError,
        subprocess.SubprocessError,
    ) as exc:
        print(f"load test failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        if isinstance(exc, ApiError) and exc.code == "RATE_LIMITED":
            print("hint: run the server with SPADES_RATE_LIMITS=0 for load tests", file=sys.stderr)
        for server in servers:
            print(
                f"server log (tail, port {server.port}):\n{server.tail_log(1500)}", file=sys.stderr
            )
        return 1
    finally:
        stop_servers(servers)
        if database is not None:
            database.drop()


if __name__ == "__main__":
    raise SystemExit(main())
