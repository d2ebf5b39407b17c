"""The later processes set up side by side, then time one process at a time.

With --processes N each mode's processes 2..N only time, on the first process's Inductor cache. Most of such a
process is setting up: starting Python, importing torch and Inductor and what the model file imports, loading the
model, compiling again from the cache. The later processes (2..N of every mode: process 2 of every mode, then
process 3, ...) therefore start together, one group where they fit (on the H200 a 1B Llama's two rounds of three
set up in 56 s and 46 s one round after the other; together, the second setting up is saved); each sets up and
then waits before its warm-up, idle: blocked on a FIFO (``gate``), its GPU work synchronized and Inductor's
compile workers stopped, so it uses no CPU and submits no GPU work. When every worker of the group waits
there (or has ended), the parent releases them one at a time in the run's order (eager, default, max-autotune),
each when the one before it has finished. So no process warms up or times while another process does anything, as
when they ran one after another; only the setting up overlaps, and only with other setting up (never with a first
process's compile or autotuning, which all come before the later processes).

Side by side only as far as the processes fit together: they are cut into groups whose first processes' peaks
(GPU: reserved during the first call; CPU: RSS) sum to at most half the device's memory and, by default (``auto``),
of at most one process per two CPUs: setting up is CPU work (imports, Dynamo's tracing, loading), and on the 2-core
VM two setups side by side took as long as one after the other. Not under torchrun, for the dynamic mode's
multi-point worker, or where the output folder cannot hold a FIFO: those rounds run one process after another.
The parent never imports torch.
"""

from __future__ import annotations

import errno
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelscope.capture.signals import stop_worker

POLL_S = 0.05  # how often the parent looks whether a held worker has reached its gate (or died)
SHARE = 0.5  # of the device's memory that a group's processes may fill together
WAITING_FOR_MODEL = "waiting for the model"  # a worker's progress line while it polls for the model's file


@dataclass(slots=True)
class Hold:
    """One held worker: its gate (a FIFO the worker opens before its warm-up), how many other workers it may wait
    for (their setting up, the timing of those before it: its --timeout grows by that many), and its process once
    the runner started it. A worker started ahead of its turn (``Staged``) also has ``pre``, the FIFO it opens
    once its model is on the CPU, before the device, and ``model_from``, the file the parent creates when the
    process that builds the model has ended (it waits for the model's file until then)."""

    gate: Path | None
    waits_for: int
    procs: list[Any] = field(default_factory=list)  # the worker's Popen, set by the runner (on_start)
    pre: Path | None = None
    model_from: Path | None = None
    budget_s: float = 0.0  # the worker's --timeout for each stretch it runs (set by the runner)
    deadline: float = math.inf  # time.monotonic() past which the runner stops it: none while it waits at a gate
    stage: str = ""  # its last progress line (the runner sets it): "waiting for the model ..." is idle polling

    def on_start(self, proc: Any) -> None:
        self.procs.append(proc)

    def current_deadline(self) -> float:
        return self.deadline

    def note_stage(self, text: str) -> None:
        """The worker's progress line (the runner passes each on): while it polls for the model's file it waits on
        the process that builds it, so its --timeout clock stops there and starts again, whole, after."""
        was = self.stage.startswith(WAITING_FOR_MODEL)
        self.stage = text
        if self.pre is None:
            return
        if text.startswith(WAITING_FOR_MODEL):
            self.deadline = math.inf
        elif was:
            self.deadline = time.monotonic() + self.budget_s


def groups(peaks: Sequence[int | None], memory: int | None, most: int | None = None) -> list[list[int]]:
    """Indices of a round's workers in consecutive groups of at most ``most`` (None: any number) whose peaks
    (bytes, each plus 1 GiB for the process itself) fit in SHARE of ``memory``; a worker whose peak is unknown, or
    with no known memory, sets up alone."""
    out: list[list[int]] = []
    used: float | None = None  # what the last group needs; None: it takes no one else
    for i, peak in enumerate(peaks):
        need = peak + 2**30 if peak is not None and memory else None
        if need is not None and used is not None and used + need <= (memory or 0) * SHARE and \
                (most is None or len(out[-1]) < most):
            out[-1].append(i)
            used += need
        else:
            out.append([i])
            used = need
    return out


def make_gate(path: Path) -> bool:
    """A fresh FIFO at ``path``; False where the file system cannot hold one (then the worker is not held)."""
    try:
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    except (OSError, AttributeError):
        return False
    return True


def together(starts: Sequence[Callable[[Hold], Any]], gates: Sequence[Path]) -> list[Any]:
    """Run ``starts[i](hold)`` for every worker of a group at once, each in a thread (``start`` runs the worker to
    its end and returns its records), the workers held at their gates; once every one has set up (or ended),
    release them in order, each after the one before finished. Returns each start's value. On Ctrl-C the workers
    not yet finished are killed (their whole process groups), and KeyboardInterrupt is raised with the finished
    ones' values in its ``args[0]``. (``Staged`` with one gate per worker and no limit.)"""
    st = Staged(None)
    for start, gate in zip(starts, gates):
        st.add(start, Hold(gate, len(gates)))
    done = 0
    try:
        # Every worker of the group has set up (or ended) before the first one warms up: holding the gate's
        # other end open keeps each blocked, idle, in its read until its turn.
        st.settle()
        for i in range(len(starts)):
            st.release(i)
            st.join(i)
            done = i + 1
    except BaseException as exc:  # Ctrl-C, or a start that raised: no worker may stay held
        st.stop(range(done, len(starts)))
        if isinstance(exc, KeyboardInterrupt):
            raise KeyboardInterrupt(st.results[:done]) from None
        raise
    return st.results


class Staged:
    """A run's workers started ahead of their turn (``profile`` when they fit: run/profile.py ``ModeRuns.staged``).

    Each worker is added with its ``start`` (runs it to its end in a thread, returns its records) and the gates
    it will wait at, in order: ``pre`` once its model is on the CPU (before the device, the reference, the
    compile), and for a later process ``gate`` before its warm-up. ``settle()`` starts every worker not yet
    started, at most ``most`` setting up at a time (a worker waiting at a gate, or ended, frees its place), and
    returns once every started worker waits at a gate or has ended: only then does the parent ``release`` one
    (or, for the later processes' compiles from the cache, a group) to go on. So the setting up (importing torch,
    reading the environment, the model file's imports, loading the model) overlaps only other setting up, and a
    first process's run (its reference, compile, timing, profile) or a later process's timing has the machine to
    itself, as when they ran one after another."""

    def __init__(self, most: int | None) -> None:
        self.most = most
        self.starts: list[Callable[[Hold], Any]] = []
        self.holds: list[Hold] = []
        self.next_gate: list[Path | None] = []  # the gate each worker waits at next (None: it runs to its end)
        self.threads: list[threading.Thread | None] = []
        self.results: list[Any] = []
        self.errors: list[BaseException | None] = []
        self.ends: list[int | None] = []  # the write end of the gate a worker waits at now
        self.on_end: list[Callable[[], None] | None] = []
        # set by the worker's thread as it ends: Thread.is_alive() can read False for a thread still running once
        # a KeyboardInterrupt broke a join() on it (CPython), and a worker left so would never be stopped
        self.ended: list[bool] = []

    def add(self, start: Callable[[Hold], Any], hold: Hold, on_end: Callable[[], None] | None = None) -> int:
        self.starts.append(start)
        self.holds.append(hold)
        self.next_gate.append(hold.pre or hold.gate)
        self.threads.append(None)
        self.results.append(None)
        self.errors.append(None)
        self.ends.append(None)
        self.on_end.append(on_end)
        self.ended.append(False)
        return len(self.starts) - 1

    def _start(self, i: int) -> None:
        def run() -> None:
            try:
                self.results[i] = self.starts[i](self.holds[i])
            except BaseException as exc:  # noqa: BLE001 - handed to the parent thread
                self.errors[i] = exc
            finally:
                if self.on_end[i] is not None:
                    self.on_end[i]()  # type: ignore[misc]
                self.ended[i] = True

        t = threading.Thread(target=run, daemon=True)
        self.threads[i] = t
        t.start()

    def alive(self, i: int) -> bool:
        return self.threads[i] is not None and not self.ended[i]

    def waiting(self, i: int) -> bool:
        """Whether worker i waits at its gate now (its write end is held open here), polling once."""
        if self.ends[i] is not None:
            return True
        gate = self.next_gate[i]
        if gate is None or not self.alive(i):
            return False
        try:
            self.ends[i] = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: nobody reads yet
                raise
            return False
        self.holds[i].deadline = math.inf  # waiting is not its --timeout
        return True

    def settle(self, only: Sequence[int] | None = None) -> None:
        """Start the workers not yet started (of ``only``, else all), ``most`` setting up at a time, and return
        once each started one waits at its gate or has ended."""
        todo = [i for i in (range(len(self.starts)) if only is None else only) if self.threads[i] is None]
        while True:
            busy = [i for i in range(len(self.starts)) if self.alive(i) and not self.waiting(i)]
            # one that polls for the model's file (a stat every 0.1 s) leaves its place to the next one
            setting_up = [i for i in busy if not self.holds[i].stage.startswith(WAITING_FOR_MODEL)]
            while todo and (self.most is None or len(setting_up) < self.most):
                i = todo.pop(0)
                self._start(i)
                busy.append(i)
                setting_up.append(i)
            if not todo and not busy:
                return
            time.sleep(POLL_S)

    def release(self, i: int) -> None:
        """Let worker i go on from the gate it waits at (settle() saw it there); its next gate is its ``gate``."""
        fd = self.ends[i]
        self.holds[i].deadline = time.monotonic() + self.holds[i].budget_s
        if fd is not None:
            try:
                os.write(fd, b"go")
            except BrokenPipeError:  # it was stopped while it waited (its --timeout)
                pass
            os.close(fd)
            self.ends[i] = None
        self.next_gate[i] = self.holds[i].gate if self.next_gate[i] == self.holds[i].pre else None

    def join(self, i: int) -> Any:
        """Worker i's records once it ended (its start's exception raised here)."""
        while self.alive(i):
            time.sleep(POLL_S)  # not Thread.join(): see ``ended``
        if self.errors[i] is not None:
            raise self.errors[i]  # type: ignore[misc]
        return self.results[i]

    def stop(self, indices: Sequence[int] | None = None) -> None:
        """Kill the given workers (else every one not finished), whole process groups, and wait for their
        threads."""
        pick = range(len(self.starts)) if indices is None else indices
        for i in pick:
            for p in self.holds[i].procs:
                if p.poll() is None:
                    stop_worker(p)
            if self.ends[i] is not None:
                os.close(self.ends[i])  # type: ignore[arg-type]
                self.ends[i] = None
        deadline = time.monotonic() + 30
        for i in pick:
            while self.alive(i) and time.monotonic() < deadline:
                time.sleep(POLL_S)
