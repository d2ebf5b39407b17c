"""SIGINT and SIGTERM during a run: keep what finished, leave no worker behind.

Inside ``handling()`` the first signal raises ``Interrupted`` in the main thread wherever the run stands (waiting
for a worker, analysing a mode): the runner stops the worker it waits for, the command keeps every finished mode,
writes result.json and the reports, and exits 130 (SIGINT) or 143 (SIGTERM) with one line saying what it kept. A
second signal during that clean-up does not wait for it: it stops every worker still running and exits at once;
result.json stays as last written (the runs write it as each mode finishes).

Stopping a worker stops its tree: its process group (Inductor's compile workers) and the group of every process
below it, since torchrun starts each rank in a session of its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from types import FrameType

from kernelscope.errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []  # the signals received inside handling(), in order
_live: set[int] = set()  # the workers running now, each the leader of its process group


@contextlib.contextmanager
def handling() -> Iterator[None]:
    """SIGINT and SIGTERM handled as above inside; the previous handlers come back after. Only the main thread
    may set handlers: in another one this changes nothing."""
    try:
        previous = {s: signal.signal(s, _on_signal) for s in SIGNALS}
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        _received.clear()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    if len(_received) == 1:
        raise Interrupted(signum)
    for pid in list(_live):
        stop_tree(pid)
    first = Interrupted(_received[0])
    with contextlib.suppress(OSError):
        os.write(2, f"kernelscope: interrupted ({first.name}), then {signal.Signals(signum).name} while keeping "
                    "the finished modes: stopped at once; result.json is as last written\n".encode())
    os._exit(first.exit_code)


def received() -> str | None:
    """The first signal received inside ``handling()`` ("SIGTERM"); None when none was."""
    return signal.Signals(_received[0]).name if _received else None


def interrupted() -> Interrupted:
    """The exception for the signal that stopped the run, to raise again after a worker was stopped (a Ctrl-C
    outside ``handling()`` is Python's own KeyboardInterrupt: SIGINT)."""
    return Interrupted(_received[0] if _received else signal.SIGINT)


@contextlib.contextmanager
def live(pid: int) -> Iterator[None]:
    """A worker runs: a second signal stops its tree before kernelscope exits."""
    _live.add(pid)
    try:
        yield
    finally:
        _live.discard(pid)


def stop_tree(pid: int) -> None:
    """SIGKILL to the process group led by ``pid`` and to the group of every process below it. The tree is read
    from /proc before anything is killed (a process whose parent died is adopted elsewhere and no longer found
    below it), and frozen first: SIGSTOP to each group found, then the tree read again, until it holds no new
    group, so that a child started meanwhile in a session of its own (a torchrun rank's) is found too. Never
    kernelscope's own group (a worker runs in a session of its own)."""
    stopped: set[int] = set()
    while groups := {pid, *_descendant_groups(pid)} - {os.getpgrp()} - stopped:
        _signal_groups(groups, signal.SIGSTOP)
        stopped |= groups
    _signal_groups(stopped, signal.SIGKILL)


def _signal_groups(groups: set[int], sig: signal.Signals) -> None:
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, sig)


def stop_worker(proc: subprocess.Popen[str]) -> None:
    """A worker's process group and, while it still runs, every group below it (torchrun's ranks); then its exit
    is reaped. The runner stops a worker past its --timeout with it, rounds.py a held worker that is not to run."""
    if proc.poll() is None:
        stop_tree(proc.pid)
    else:
        _signal_groups({proc.pid}, signal.SIGKILL)  # compile workers that outlived a finished worker
    with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL does not get ignored
        proc.wait(timeout=30)


def _descendant_groups(pid: int) -> set[int]:
    """The process groups of every process below ``pid`` (empty without /proc)."""
    children: dict[int, list[tuple[int, int]]] = {}  # parent -> (child, its process group)
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue  # ended meanwhile
            # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ")"
            fields = stat[stat.rfind(b")") + 2:].split()
            children.setdefault(int(fields[1]), []).append((int(entry), int(fields[2])))
    groups, todo = set(), [pid]
    while todo:
        for child, group in children.get(todo.pop(), ()):
            groups.add(group)
            todo.append(child)
    return groups
