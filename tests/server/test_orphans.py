"""Processes a server starts never outlive it: the workers of the EXPERT bots' pool die
with their server when it is killed (SIGKILL, as the OOM killer does); a normal stop
ends them too (test_drain.py). The mechanism (app/processes.py) is the same for the
workers of `spades serve --workers N`."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import all_gone, wait_for, warm_expert_pool
from tests.support.server import ROOT, LiveServer

# Each EXPERT decision thinks this long: the worker is busy when its server dies.
EXPERT_ENV = {"SPADES_EXPERT_MS": "3000", "SPADES_BOT_WORKERS": "1"}

# A parent that starts a child asking to die with it (from its main thread, or from
# another thread), prints the child's pid, and waits.
CHILD = (
    "import sys, time\n"
    "from app.processes import die_with_parent\n"
    "die_with_parent(int(sys.argv[1]), sys.argv[2] == 'main')\n"
    "print('asked', flush=True)\n"
    "time.sleep(120)\n"
)
PARENT = (
    "import os, subprocess, sys, threading, time\n"
    "def start():\n"
    "    me = str(os.getpid())\n"
    "    child = subprocess.Popen([sys.executable, '-c', sys.argv[1], me, sys.argv[2]])\n"
    "    print(child.pid, flush=True)\n"
    "if sys.argv[2] == 'main':\n"
    "    start()\n"
    "else:\n"
    "    worker = threading.Thread(target=start)\n"
    "    worker.start()\n"
    "    worker.join()\n"
    "time.sleep(120)\n"
)


@pytest.mark.slow
async def test_the_bot_pools_workers_die_with_a_killed_server(tmp_path: Path) -> None:
    server = LiveServer(tmp_path / "spades.db", env=EXPERT_ENV)
    server.start()
    try:
        workers = await warm_expert_pool(server)
        server.signal(signal.SIGKILL)
        server.exit_code(timeout=10)
        wait_for(all_gone(workers), 5, f"workers {workers} to die")
    finally:
        server.stop()


@pytest.mark.parametrize("started_from", ["main", "thread"])
def test_a_child_that_asked_dies_with_its_killed_parent(started_from: str) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, CHILD, started_from],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert parent.stdout.readline().strip() == "asked"
        parent.kill()
        parent.wait(timeout=10)
        # From a thread, the kernel's signal would follow that thread: the watch ends it.
        wait_for(all_gone({child}), 5, f"child {child} to die")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
