"""Progress of a profile run: which mode, which stage (compile, autotune, warm-up, timing, profiling), how long.

On a terminal one live line per mode is redrawn (stage, time in the stage, time in the mode). Anywhere else (CI
logs, pipes) redrawing makes a mess, so each stage change prints one plain line with a timestamp, and a stage
that lasts (a 10-minute max-autotune compile) prints a "still ..." line every ``heartbeat_s`` so the log is never
silent for long.

The worker reports what it is doing as free text (``@@progress compiling (first call)``); ``stage_of`` maps that
text to a stage name, so the worker's messages can change without breaking the display.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

from kernelscope.report.terminal import terminal_width

# (pattern on the worker's progress text, stage). First match wins.
STAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^autotun", re.I), "autotune"),
    (re.compile(r"^compil", re.I), "compile"),
    (re.compile(r"^warm", re.I), "warm-up"),
    (re.compile(r"^timing", re.I), "timing"),
    (re.compile(r"^profil", re.I), "profiling"),
    (re.compile(r"^reference", re.I), "reference"),
    (re.compile(r"^first call", re.I), "first call"),
    (re.compile(r"^(reading the environment|configuring)", re.I), "environment"),
    (re.compile(r"^(building|loading) the model", re.I), "build"),  # loading: built once for the run
    (re.compile(r"^importing the model file", re.I), "build"),  # started ahead: its imports, then its model
    (re.compile(r"^waiting for the model", re.I), "waiting for the model"),  # ... once the first process saved it
    (re.compile(r"^waiting for its turn", re.I), "waiting"),  # set up, idle until the parent releases it
    (re.compile(r"^(building|importing|starting|loading)", re.I), "setup"),
)


_COMPILING = {"compile", "autotune"}


def stage_of(text: str) -> str:
    for pattern, stage in STAGES:
        if pattern.search(text.strip()):
            return stage
    return text.strip().split(" (")[0] or "running"


def duration(seconds: float) -> str:
    """3.2 s, 1m 05s, 1h 02m."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    m, s = divmod(int(seconds), 60)
    if m < 60:
        return f"{m}m {s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m"


class _ModeState:
    def __init__(self, label: str, clock: Callable[[], float]) -> None:
        self.label = label
        self.clock = clock
        self.started = self.stage_started = clock()
        self.stage = "starting"
        self.detail = ""
        self.last_line = self.started

    def line(self) -> str:
        now = self.clock()
        detail = f" ({self.detail})" if self.detail and self.detail != self.stage else ""
        return (f"{self.label}: {self.stage}{detail} · {duration(now - self.stage_started)} in stage, "
                f"{duration(now - self.started)} in mode")


class Progress:
    """``with progress.mode("[2/4] default") as on_progress: run_mode(..., on_progress)``.

    ``on_progress(mode_name, text)`` is the runner's callback; it may be called from the runner's reader thread.
    """

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None, heartbeat_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic,
                 now: Callable[[], _dt.datetime] = lambda: _dt.datetime.now().astimezone(),
                 width: int | None = None) -> None:
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty()) if tty is None else tty
        self.width = width or terminal_width(self.stream)
        self.heartbeat_s = heartbeat_s
        self.clock = clock
        self.now = now
        self._lock = threading.Lock()
        self._live: Live | None = None  # on a terminal: the one live display of the modes running now
        self._live_states: list[_ModeState] = []

    # -- plain lines (not a terminal) -------------------------------------------------------------------------
    def _print(self, text: str) -> None:
        # No line wider than the terminal (or COLUMNS): a long mode name and stage detail go on indented lines.
        line = f"{self.now().strftime('%Y-%m-%d %H:%M:%S')} {text}"
        lines = textwrap.wrap(line, self.width, subsequent_indent="    ", break_on_hyphens=False) or [line]
        with self._lock:
            self.stream.write("".join(f"{ln}\n" for ln in lines))
            self.stream.flush()

    def _plain_update(self, state: _ModeState, text: str) -> None:
        stage = stage_of(text)
        if stage == state.stage:
            state.detail = text.strip()
            return
        if {stage, state.stage} <= _COMPILING and self.clock() - state.last_line < 10:
            # One autotune per GEMM, each followed by more compiling: a line per switch would flood the log
            # (the heartbeat still says where the mode is).
            state.stage, state.detail = stage, text.strip()
            return
        took = (f" ({state.stage} took {duration(self.clock() - state.stage_started)})"
                if state.stage != "starting" else "")
        state.stage, state.detail, state.stage_started = stage, text.strip(), self.clock()
        state.last_line = self.clock()
        detail = f": {state.detail}" if state.detail and state.detail.lower() != stage else ""
        self._print(f"{state.label}: {stage}{detail}{took}")

    def _heartbeat(self, state: _ModeState, stop: threading.Event) -> None:
        while not stop.wait(min(self.heartbeat_s, 5.0)):
            if self.clock() - state.last_line >= self.heartbeat_s:
                state.last_line = self.clock()
                self._print(f"{state.label}: still {state.stage} ({duration(self.clock() - state.stage_started)}"
                            f" in stage, {duration(self.clock() - state.started)} in mode)")

    @contextmanager
    def mode(self, label: str) -> Iterator[Callable[[str, str], None]]:
        state = _ModeState(label, self.clock)
        if not self.tty:
            self._print(f"{label}: started")
            stop = threading.Event()
            beat = threading.Thread(target=self._heartbeat, args=(state, stop), daemon=True)
            beat.start()
            try:
                yield lambda _name, text: self._plain_update(state, text)
            finally:
                stop.set()
                beat.join(timeout=1)
                self._print(f"{label}: finished in {duration(self.clock() - state.started)}")
            return

        def update(_name: str, text: str) -> None:
            stage = stage_of(text)
            if stage != state.stage:
                state.stage, state.stage_started = stage, self.clock()
            state.detail = text.strip()

        # One live display holds a line per mode running now (a round's later processes set up together,
        # capture/rounds.py): rich allows one Live at a time.
        with self._lock:
            self._live_states.append(state)
            if self._live is None:
                states = self._live_states

                class _Lines:  # re-rendered on every refresh, so the elapsed times tick while a stage lasts
                    def __rich__(self) -> Text:
                        return Text("\n".join(s.line() for s in list(states)))

                self._live = Live(_Lines(), console=Console(file=self.stream, highlight=False),
                                  refresh_per_second=4, transient=True)
                self._live.start()
        try:
            yield update
        finally:
            with self._lock:
                self._live_states.remove(state)
                if not self._live_states and self._live is not None:
                    self._live.stop()
                    self._live = None
