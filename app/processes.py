"""Child processes that never outlive their parent.

A process the server starts (a worker of the EXPERT bots' pool, a worker of
`spades serve --workers N`) has nothing left to do once the server is gone: left running,
reparented to init, it holds memory, a core and (a server worker) the listening socket.
On Linux the kernel kills it the moment its parent dies (`prctl(PR_SET_PDEATHSIG,
SIGKILL)`), whatever killed the parent (SIGKILL, the OOM killer); elsewhere, and as a
second line everywhere, a thread checks every second that its parent is still the
process that started it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
CHECK_SECONDS = 1.0
EXIT_ORPHANED = 1


def die_with_parent(parent_pid: int, started_on_main_thread: bool = True) -> None:
    """Make this process exit when its parent, the process `parent_pid`, is gone. Call it
    first thing in the child (a pool's initializer, a worker's target).

    The kernel's parent-death signal fires when the parent *thread* that started the
    child ends, so it is asked for only when the parent started the child from its main
    thread (whose end is the process's); the parent-pid check covers the rest."""
    if started_on_main_thread:
        _ask_the_kernel()
    if os.getppid() != parent_pid:  # the parent died before the kernel was asked
        os._exit(EXIT_ORPHANED)
    watch = threading.Thread(
        target=_exit_when_orphaned, args=(parent_pid,), name="parent-watch", daemon=True
    )
    watch.start()


def spawn_arguments() -> tuple[int, bool]:
    """The arguments of `die_with_parent` for a child started from here, now."""
    return os.getpid(), threading.current_thread() is threading.main_thread()


def _ask_the_kernel() -> bool:
    """Ask Linux to SIGKILL this process when its parent thread ends; False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    return False


def _exit_when_orphaned(parent_pid: int) -> None:
    while True:
        time.sleep(CHECK_SECONDS)
        if os.getppid() != parent_pid:
            os._exit(EXIT_ORPHANED)
