"""One run: set up the tables and their watchers, drive them, measure, report."""

from __future__ import annotations

import argparse
import asyncio
import functools
import math
import os
import random
import secrets
import sys
import time
from typing import Any

from .harness import Api, TableSlot, bounded_gather, drive_rate, drive_saturate, ws_url_of
from .measure import (
    LoadgenGc,
    Sample,
    Stats,
    calibration_line,
    main_thread_shares,
    percentile,
    read_rss_kib,
    read_rss_total_kib,
    server_gc_collections,
    start_profilers,
    stop_profiler,
    write_samples,
)
from .servers import ServerProcess, read_calls

DRAIN_TIMEOUT = 20.0
MAX_DURATION = 3600.0
HAND_MOVES = 56  # 4 bids and 52 cards (a Blind Nil reveal adds one)
SPREAD_MOVES_PER_S = 10.0  # the slowest spreading speed allowed (a busy shared machine)
SETUP_TIMEOUT_PER_TABLE = 180.0


def run_mode(args: argparse.Namespace) -> str:
    """ "idle" (sockets only, no moves), "saturate" or "rate"."""
    return "idle" if args.idle else "saturate" if args.saturate else "rate"


async def monitor(stats: Stats, pids: list[int], end: float, every: float) -> None:
    """Progress on stderr every `every` seconds (bounded by `end`)."""
    last = Sample.take(pids)
    moves = 0
    errors = 0
    for _ in range(int(MAX_DURATION / every) + 1):
        await asyncio.sleep(every)
        now = Sample.take(pids)
        new = stats.latencies[moves:]
        moves = len(stats.latencies)
        total_errors = sum(stats.errors.values())
        span = now.at - last.at
        window_p95 = percentile(sorted(new), 95) * 1000
        server = ""
        if now.server_cpu is not None and last.server_cpu is not None:
            server = f" server CPU {100 * (now.server_cpu - last.server_cpu) / span:.0f}%"
        rss = read_rss_total_kib(pids)
        print(
            f"  [{time.strftime('%H:%M:%S')}] {len(new) / span:7.1f} moves/s  "
            f"p95 {window_p95:7.1f} ms  errors +{total_errors - errors}{server}"
            f"  own CPU {100 * (now.own_cpu - last.own_cpu) / span:.0f}%"
            + (f"  server RSS {rss / 1024:.0f} MiB" if rss else ""),
            file=sys.stderr,
        )
        errors = total_errors
        last = now
        if now.at >= end:
            return


async def run(
    args: argparse.Namespace,
    urls: list[str],
    pids: list[int],
    backend: str,
    build_label: str,
    calibration: float,
    servers: list[ServerProcess] | None = None,
) -> dict[str, Any]:
    """Set up, measure, tear down; returns the figures. `urls` are the server processes'
    GraphQL endpoints: player i of table t talks to process (t*4+i) % len(urls)."""
    stats = Stats()
    loadgen_gc = LoadgenGc(args.loadgen_gc)
    quiet: bool = args.quiet
    n = len(urls)
    # One small pool per table (and process): httpcore scans every connection of a pool
    # for every request, so one shared pool of hundreds of connections costs ~10 ms CPU
    # per move.
    apis: list[Api] = []
    slots = []
    run_id = secrets.token_hex(3)
    seed_base = None if args.random_deals else 1
    for i in range(args.tables):
        processes = [(i * 4 + seat) % n for seat in range(4)]
        by_process = {p: Api(urls[p], pool=4) for p in dict.fromkeys(processes)}
        apis += by_process.values()
        slots.append(
            TableSlot(
                i,
                [by_process[p] for p in processes],
                [ws_url_of(urls[p]) for p in processes],
                stats,
                run_id,
                None if seed_base is None else seed_base + i,
                spectators=args.spectators,
                lobby=args.lobby,
            )
        )
    try:
        t = time.perf_counter()
        await bounded_gather(
            [s.sign_up for s in slots], max(1, args.setup_concurrency // 4), "sign-ups", quiet
        )
        signup_s = time.perf_counter() - t
        t = time.perf_counter()
        await bounded_gather([s.new_table for s in slots], args.setup_concurrency, "tables", quiet)
        tables_s = time.perf_counter() - t
        await asyncio.sleep(1.0)
        rss_before = read_rss_total_kib(pids)
        rss_before_each = [read_rss_kib(pid) for pid in pids]
        t = time.perf_counter()
        await bounded_gather([s.connect for s in slots], args.setup_concurrency, "sockets", quiet)
        sockets_s = time.perf_counter() - t
        await asyncio.sleep(1.0)
        rss_after = read_rss_total_kib(pids)
        rss_after_each = [read_rss_kib(pid) for pid in pids]
        connections = sum(len(s.watchers) for s in slots)
        spread_s = 0.0
        if not args.lockstep and not args.idle:
            # Tables that all start together would end every trick and every hand in the
            # same second (a burst of 2-4 updates per move); on a live server they are
            # everywhere in their hands. Each table first plays 0..55 moves.
            t = time.perf_counter()
            offsets = random.Random(args.tables).choices(range(HAND_MOVES), k=len(slots))
            await bounded_gather(
                [functools.partial(s.spread, k) for s, k in zip(slots, offsets, strict=True)],
                len(slots),
                "spread over their hands",
                quiet,
                max(SETUP_TIMEOUT_PER_TABLE, sum(offsets) / SPREAD_MOVES_PER_S),
            )
            spread_s = time.perf_counter() - t

        if not quiet:
            mode = run_mode(args) if args.idle or args.saturate else f"{args.rate:g} move/s"
            print(
                f"  driving {len(slots)} tables ({mode}): {args.warmup:g} s warmup, "
                f"then {args.duration:g} s measured",
                file=sys.stderr,
            )
        loadgen_gc.settle()
        start = time.perf_counter()
        record_from = start + args.warmup
        end = record_from + args.duration
        if args.idle:
            drivers = []
        elif args.saturate:
            max_steps = int((end - start) * 10_000) + 10
            drivers = [drive_saturate(s, end, max_steps) for s in slots]
        else:
            drivers = [drive_rate(s, 1.0 / args.rate, start, end) for s in slots]
        tasks = [asyncio.create_task(d) for d in drivers]
        monitor_task = (
            None
            if quiet
            else asyncio.create_task(monitor(stats, pids, end, min(5.0, args.duration)))
        )
        await asyncio.sleep(max(0.0, record_from - time.perf_counter()))
        loadgen_gc.measure()
        calls_before = [await read_calls(server) for server in servers or []]
        gc_before = await server_gc_collections(urls[0])
        stats.recording = True
        profilers = start_profilers(args.py_spy, pids, end - time.perf_counter())
        before = Sample.take(pids)
        await asyncio.sleep(max(0.0, end - time.perf_counter()))
        after = Sample.take(pids)
        calls_after = [await read_calls(server) for server in servers or []]
        gc_after = await server_gc_collections(urls[0])
        for profiler in profilers:
            await asyncio.to_thread(stop_profiler, profiler, args.duration + 30)
        measured = after.at - before.at
        # Moves started inside the window finish (bounded) and still count.
        pending: set[asyncio.Task[None]] = set()
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=DRAIN_TIMEOUT)
        stats.recording = False
        # Only now: its first collections after the window scan every socket's objects
        # (hundreds of ms at 2,000 sockets), which landed in the moves still finishing.
        loadgen_gc.done()
        for task in pending:
            task.cancel()
        stuck = len(pending)
        await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                stats.error(f"driver crashed: {type(task.exception()).__name__}")
        if monitor_task is not None:
            monitor_task.cancel()
            await asyncio.gather(monitor_task, return_exceptions=True)
        rss_end = read_rss_total_kib(pids)
        rss_end_each = [read_rss_kib(pid) for pid in pids]
    finally:
        await asyncio.gather(*(s.close() for s in slots), return_exceptions=True)
        await asyncio.gather(*(api.close() for api in apis), return_exceptions=True)

    if args.samples:
        write_samples(args.samples, stats, before.at)
    latencies = sorted(stats.latencies)
    http = sorted(stats.http_latencies)
    server_cpu = (
        (after.server_cpu - before.server_cpu) / measured
        if after.server_cpu is not None and before.server_cpu is not None
        else None
    )
    server_cpu_each = [
        (last - first) / measured if first is not None and last is not None and measured else None
        for first, last in zip(before.server_cpus, after.server_cpus, strict=True)
    ]
    machine = None
    if after.machine is not None and before.machine is not None:
        busy = after.machine[0] - before.machine[0]
        total = after.machine[1] - before.machine[1]
        machine = busy / total * (os.cpu_count() or 1) if total else None
    shares = main_thread_shares(before, after, measured)
    return {
        "scenario": args.scenario,
        "build": build_label,
        "calibration_us": calibration,
        "mode": run_mode(args),
        "backend": backend,
        "server_processes": n,
        "server_pids": pids,
        "tables": len(slots),
        "subscriptions": connections,
        "spectators_per_table": args.spectators,
        "lobby_subscriptions": args.lobby,
        "rate_per_table": args.rate if run_mode(args) == "rate" else None,
        "target_moves_per_s": args.rate * len(slots) if run_mode(args) == "rate" else None,
        "warmup_s": args.warmup,
        "duration_s": measured,
        "moves": len(latencies),
        "moves_per_s": len(latencies) / measured if measured else 0.0,
        "updates_received": stats.updates_received,
        "lobby_updates_received": stats.lobby_updates,
        "loadgen_gc": loadgen_gc.figures(),
        "latency_ms": {
            "p50": percentile(latencies, 50) * 1000,
            "p95": percentile(latencies, 95) * 1000,
            "p99": percentile(latencies, 99) * 1000,
            "max": (latencies[-1] * 1000) if latencies else math.nan,
        },
        "http_latency_ms": {
            "p50": percentile(http, 50) * 1000,
            "p95": percentile(http, 95) * 1000,
            "p99": percentile(http, 99) * 1000,
            "max": (http[-1] * 1000) if http else math.nan,
        },
        "late_ticks": stats.late_ticks,
        "version_gaps": stats.gaps,
        "games_finished": stats.games_finished,
        "errors": dict(stats.errors),
        "stuck_drivers": stuck,
        "setup_s": {
            "sign_ups": signup_s,
            "tables": tables_s,
            "sockets": sockets_s,
            "spread": spread_s,
        },
        "lockstep": bool(args.lockstep),
        "server_rss_kib": {
            "before_sockets": rss_before,
            "after_sockets": rss_after,
            "end": rss_end,
        },
        "server_rss_kib_per_process": [
            {"before_sockets": b, "after_sockets": a, "end": e}
            for b, a, e in zip(rss_before_each, rss_after_each, rss_end_each, strict=True)
        ],
        "kib_per_connection": (
            (rss_after - rss_before) / connections
            if rss_after is not None and rss_before is not None
            else None
        ),
        "server_cpu_cores": server_cpu,
        "server_cpu_cores_per_process": server_cpu_each,
        # Summed over the processes (so up to N with N processes).
        "server_main_thread": (
            {key: sum(share[key] for share in shares) for key in ("on_cpu", "waiting_for_cpu")}
            if shares
            else None
        ),
        "server_main_thread_per_process": shares,
        "loadgen_cpu_cores": (after.own_cpu - before.own_cpu) / measured if measured else None,
        "machine_cpu_cores_busy": machine,
        "server_cpu_ms_per_move": (
            server_cpu * measured / len(latencies) * 1000 if server_cpu and latencies else None
        ),
        "loadgen_cpu_ms_per_move": (
            (after.own_cpu - before.own_cpu) / len(latencies) * 1000 if latencies else None
        ),
        "machine_cpu_ms_per_move": (
            machine * measured / len(latencies) * 1000 if machine and latencies else None
        ),
        "other_cpu_cores": (
            machine - server_cpu - (after.own_cpu - before.own_cpu) / measured
            if machine is not None and server_cpu is not None and measured
            else None
        ),
        "cpu_count": os.cpu_count(),
        "server_calls_per_move": calls_per_move(calls_before, calls_after, len(latencies)),
        # When the slowest moves started (s into the window): a periodic stall shows.
        "slowest": [
            [round(start - min(stats.starts), 2), round(latency * 1000, 1)]
            for latency, start in sorted(
                zip(stats.latencies, stats.starts, strict=True), reverse=True
            )[:12]
        ]
        if stats.starts
        else [],
        "server_gc_collections": gc_delta(gc_before, gc_after),
    }


def gc_delta(
    before: dict[str, float] | None, after: dict[str, float] | None
) -> dict[str, int] | None:
    """The first server process's garbage collections in the window, by generation."""
    if before is None or after is None:
        return None
    return {g: int(after[g] - before.get(g, 0.0)) for g in sorted(after)}


def calls_per_move(before: list[int | None], after: list[int | None], moves: int) -> float | None:
    """Python calls the servers made per measured move (--count-calls), else None."""
    if not before or not moves or None in before or None in after:
        return None
    return (
        sum(a - b for a, b in zip(after, before, strict=True) if a is not None and b is not None)
        / moves
    )


def _fmt(value: float | None, unit: str = "", digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:,.{digits}f}{unit}"


def report(result: dict[str, Any], args: argparse.Namespace, loop_name: str) -> str:
    """The human-readable report."""
    lat, http, rss = result["latency_ms"], result["http_latency_ms"], result["server_rss_kib"]
    mode = (
        "saturate (each table moves as soon as all its watchers saw the previous move)"
        if result["mode"] == "saturate"
        else "idle (sockets subscribed, no moves)"
        if result["mode"] == "idle"
        else f"{result['rate_per_table']:g} move/s per table "
        f"(target {result['target_moves_per_s']:,.0f} moves/s)"
    )
    gc_figures = result["loadgen_gc"]
    errors = result["errors"]
    error_lines = (
        [f"    {kind}: {count}" for kind, count in sorted(errors.items(), key=lambda e: -e[1])]
        if errors
        else []
    )
    rss_mib = {k: (v / 1024 if v is not None else None) for k, v in rss.items()}
    lines = [
        "",
        "=== Spades load test ===",
        f"scenario:           {result['scenario'] or 'custom'} (build: {result['build']})",
        calibration_line(result["calibration_us"]),
        f"mode:               {mode}",
        f"server:             {result['server_processes']} process"
        f"{'es' if result['server_processes'] != 1 else ''}, {result['backend']}",
        f"tables:             {result['tables']}",
        f"subscriptions:      {result['subscriptions']} (one WebSocket each; "
        f"{result['spectators_per_table']} spectators per table"
        + (", players also on lobbyUpdates)" if result["lobby_subscriptions"] else ")"),
        f"duration:           {result['duration_s']:.1f} s measured after "
        f"{result['warmup_s']:g} s warmup",
        f"moves completed:    {result['moves']:,}",
        f"moves/s:            {result['moves_per_s']:,.1f}",
        f"updates received:   {result['updates_received']:,} "
        f"({result['updates_received'] / max(result['duration_s'], 1e-9):,.0f}/s)"
        + (
            f" lobby updates {result['lobby_updates_received']:,}"
            if result["lobby_subscriptions"]
            else ""
        ),
        "latency (request start -> all the table's subscribers updated):",
        f"    p50 {_fmt(lat['p50'])} ms  p95 {_fmt(lat['p95'])} ms  "
        f"p99 {_fmt(lat['p99'])} ms  max {_fmt(lat['max'])} ms",
        "latency (request start -> HTTP answer):",
        f"    p50 {_fmt(http['p50'])} ms  p95 {_fmt(http['p95'])} ms  "
        f"p99 {_fmt(http['p99'])} ms  max {_fmt(http['max'])} ms",
        f"late ticks:         {result['late_ticks']} (rate mode: move started after its slot)",
        f"games finished:     {result['games_finished']}",
        f"errors:             {sum(errors.values())}",
        *error_lines,
        f"server RSS:         before sockets {_fmt(rss_mib['before_sockets'], ' MiB')}, "
        f"after {_fmt(rss_mib['after_sockets'], ' MiB')}, at end {_fmt(rss_mib['end'], ' MiB')}",
        f"memory/connection:  {_fmt(result['kib_per_connection'], ' KiB')} "
        "(RSS delta / connections, one subscription each)",
        f"CPU (cores):        server {_fmt(result['server_cpu_cores'], digits=2)}, "
        f"load generator {_fmt(result['loadgen_cpu_cores'], digits=2)}, "
        f"whole machine busy {_fmt(result['machine_cpu_cores_busy'], digits=2)} "
        f"of {result['cpu_count']} (other processes {_fmt(result['other_cpu_cores'], digits=2)})",
        "server main thread: "
        + (
            f"on a CPU {100 * main['on_cpu']:.0f}% of the time, runnable but waiting for a "
            f"CPU {100 * main['waiting_for_cpu']:.0f}%, blocked/idle the rest"
            if (main := result["server_main_thread"])
            else "n/a"
        ),
        f"server calls/move:  {_fmt(result['server_calls_per_move'], digits=0)} "
        "(Python function calls, with --count-calls)",
        "slowest moves:      "
        + ", ".join(f"{ms:.0f} ms at {at:.1f} s" for at, ms in result["slowest"][:8]),
        "server GC:          "
        + (
            "young {}, middle {}, full {} collections in the window (first process)".format(
                *(gcs.get(g, 0) for g in ("0", "1", "2"))
            )
            if (gcs := result.get("server_gc_collections"))
            else "n/a"
        ),
        f"server CPU/move:    {_fmt(result['server_cpu_ms_per_move'], ' ms', 2)} "
        f"(load generator {_fmt(result['loadgen_cpu_ms_per_move'], ' ms', 2)}, "
        f"whole machine {_fmt(result['machine_cpu_ms_per_move'], ' ms', 2)})",
        f"setup:              sign-ups {result['setup_s']['sign_ups']:.1f} s, "
        f"tables {result['setup_s']['tables']:.1f} s, sockets {result['setup_s']['sockets']:.1f} s"
        + (
            ", all tables in lockstep (same move of the same hand)"
            if result["lockstep"]
            else f", spread over their hands {result['setup_s']['spread']:.1f} s (each "
            f"table first played 0-{HAND_MOVES - 1} moves)"
        ),
        f"load generator:     one process, {loop_name} event loop, httpx + websockets; "
        f"GC {gc_figures['mode']} while measuring (frozen after setup): "
        f"{gc_figures['collections']} collections, pauses {gc_figures['pause_total_ms']:.1f} ms "
        f"in all, longest {gc_figures['pause_max_ms']:.1f} ms",
        f"note: the load generator shares this {result['cpu_count']}-core machine with the "
        "server, so the figures (saturation moves/s above all) are what the server did "
        "while competing for CPU with its clients.",
    ]
    if result["mode"] == "rate" and result["tables"] >= 250 and result["rate_per_table"] >= 1:
        met = (
            lat["p95"] < 50
            and result["moves_per_s"] >= 0.95 * result["target_moves_per_s"]
            and not errors
        )
        one_sqlite = result["server_processes"] == 1 and result["backend"].startswith("SQLite")
        lines.append(
            "goal (250 tables x 1 move/s, p95 < 50 ms, no errors): "
            + ("MET" if met else "NOT MET")
            + ("" if one_sqlite else " (the goal is set for one process on SQLite)")
        )
    if result["server_processes"] > 1:
        lines.append("per server process (RSS at end, CPU cores, main thread on CPU / waiting):")
        per_rss = result["server_rss_kib_per_process"]
        per_cpu = result["server_cpu_cores_per_process"]
        per_main = result["server_main_thread_per_process"] or [None] * len(per_cpu)
        for number, (pid, rss_kib, cpu, main) in enumerate(
            zip(result["server_pids"], per_rss, per_cpu, per_main, strict=True)
        ):
            end_mib = rss_kib["end"] / 1024 if rss_kib["end"] is not None else None
            thread = (
                f"{100 * main['on_cpu']:.0f}% / {100 * main['waiting_for_cpu']:.0f}%"
                if main
                else "n/a"
            )
            lines.append(
                f"    #{number} PID {pid}: RSS {_fmt(end_mib, ' MiB')}, "
                f"CPU {_fmt(cpu, digits=2)}, main thread {thread}"
            )
        lines.append(
            "note: server RSS and CPU above are summed over the processes; each player "
            "talks to one process (player i of table t: process (4t+i) mod N), so every "
            "update crosses Redis."
        )
    return "\n".join(lines)
