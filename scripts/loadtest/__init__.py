"""Load test: K tables of 4 human WebSocket clients (and spectators) playing against the
server (1+ processes), as named scenarios, alone or in compare mode.

Each table has four signed-up players (HTTP `signUp`), one creates a (seeded) table
and the other three join it; every player then opens its own WebSocket
(`graphql-transport-ws`, auth in the `connection_init` payload) and subscribes to
`gameUpdates`. A driver per table then makes moves over HTTP for whichever seat
is to act (a `TRICKS 3` bid, or the first of its `legalPlays`) and measures the
latency from the start of the move's request to the moment all four subscribers
have an update whose `version` is at least the version the mutation answered.
No bots are used. A finished game is replaced by a new table for the same slot.
Before the measurement each table plays 0-55 moves (unmeasured), so that the tables
are spread over their hands as on a live server instead of all ending their tricks
and hands in the same second (`--lockstep` skips that).

Usage (from the repository root):

    .venv/bin/python scripts/loadtest moves-250x1              # a named scenario (see --help)
    .venv/bin/python scripts/loadtest saturate-50 --compare ba71337 --rounds 2
    .venv/bin/python scripts/loadtest spectators-500 --scale 0.5
    .venv/bin/python scripts/loadtest --tables 10 --duration 10
    .venv/bin/python scripts/loadtest --tables 50 --saturate
    .venv/bin/python scripts/loadtest --url http://127.0.0.1:8000/graphql --server-pid 1234
    .venv/bin/python scripts/loadtest --postgres --tables 50 --saturate   # 1 process, PG+Redis
    .venv/bin/python scripts/loadtest --processes 2 --tables 50 --saturate

Scenarios: moves-250x1, tables-1000, spectators-500, idle-10000, saturate-50, lobby,
quickplay-400 (scenarios.py); flags given beside a scenario win over its values.
`quickplay-400` is a different load (quickplay.py): 400 players, each with a
`quickPlayUpdates` socket, press Play within `--spread` (2) seconds across 2 processes;
it prints the time to MATCHED, the tables formed, players seated twice and the rating
spread per table (`--players N` sets the count). Every run prints the
machine's calibration (`python3 -m timeit "sum(range(10000))"`) and writes its figures
with `--json OUT`. `--compare COMMIT` builds COMMIT in a temporary git worktree with its
own venv and runs both builds' servers alternately under the same load (compare.py).

The load generator keeps its own garbage collector out of the measurement: everything
alive after setup is frozen and collection is off in the measured window
(`--loadgen-gc on` leaves it at default thresholds); its collections, pauses and CPU are
in the report.

Other flags: --rate R (moves/s per table, default 1), --duration S (measured, default
30), --warmup S (default 3), --json OUT (all figures), --samples CSV (every measured
move), --py-spy OUT (profile the server over the measured window; needs py-spy in the
venv), --random-deals, --lockstep, --no-uvloop, --quiet, --postgres, and --processes N.

Without `--url` the script starts its own `spades serve` on a free port with a
temporary SQLite file (cheap argon2, seeded tables allowed, rate limits off, server
log level `warning`), and stops it at the end, on Ctrl-C and on errors. With `--url` it
uses a running server (127.0.0.1 only); give `--server-pid` to get its memory
and CPU figures.

With `--postgres` the started server uses PostgreSQL + Redis instead: a fresh database
`spades_loadtest_<hex>` is created (asyncpg, user `postgres`, via database `test` on
127.0.0.1:5432, trust auth), migrated once with `spades migrate`, and dropped at the end
(also on errors and Ctrl-C); the servers get SPADES_DATABASE_URL and
SPADES_BROKER_URL=redis://127.0.0.1:6379/0 (SPADES_LOADTEST_REDIS names another) besides
the settings above. With
`--processes N` (N > 1 implies `--postgres`) N such servers run on their own ports and
player i of table t uses process (4t+i) mod N for both HTTP and its WebSocket, so every
update crosses Redis. Server RSS and CPU are then summed over the processes, with a
per-process breakdown; "whole machine" CPU/move includes PostgreSQL and Redis.

It prints: tables, subscriptions, duration, moves completed, moves/s, latency
percentiles (request start -> all 4 subscribers updated, and the HTTP answer
alone), errors by kind, server RSS before/after the sockets and KiB per
connection, the CPU used by the server (and whether its main thread was running,
waiting for a CPU, or idle), by this load generator and by other processes. The
load generator shares the machine with the server, so saturation figures are
what the server did while competing with its own clients for CPU.

Every loop is bounded: setup steps and waits have timeouts, the drivers stop at
the end of the measurement window, and the whole run has a hard deadline.
"""

from __future__ import annotations
