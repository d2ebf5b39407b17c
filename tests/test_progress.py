"""Progress of a profile run: the stage and elapsed time per mode; plain timestamped lines when not a TTY."""

from __future__ import annotations

import datetime as dt
import io
import re
import time

from kernelscope.report.progress import Progress, duration, stage_of


class Clock:
    """A settable monotonic clock, so the elapsed times in the lines are exact."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_worker_messages_map_to_stages():
    assert [stage_of(t) for t in ("importing torch", "compiling (first call)", "autotuning mm (24 choices)",
                                  "warming up", "timing 30 samples x 12 calls", "profiling",
                                  "reference forward (high precision)", "first call", "reading the environment",
                                  "configuring the mode", "building the model at batch_size=16",
                                  "loading the model (built once for this run)")] == [
        "setup", "compile", "autotune", "warm-up", "timing", "profiling", "reference", "first call", "environment",
        "environment", "build", "build"]
    assert (duration(3.21), duration(65), duration(3720)) == ("3.2 s", "1m 05s", "1h 02m")


def test_plain_lines_one_per_stage_with_timestamp_and_stage_time():
    out, clock = io.StringIO(), Clock()
    p = Progress(out, tty=False, clock=clock, heartbeat_s=3600,
                 now=lambda: dt.datetime(2026, 12, 3, 7, 32, 2))
    with p.mode("[2/3] max-autotune") as on_progress:
        for dt_s, text in ((1, "importing torch"), (2, "compiling (first call)"), (0, "compiling (first call)"),
                           (30, "autotuning addmm (12 choices)"), (2, "compiling (first call)"),
                           (400, "warming up"), (1, "timing 30 samples x 12 calls"), (1, "profiling")):
            clock.t += dt_s
            on_progress("max-autotune", text)
        clock.t += 2
    lines = out.getvalue().splitlines()
    assert all(re.match(r"^2026-12-03 07:32:02 \[2/3\] max-autotune: ", ln) for ln in lines), lines
    body = [ln.split(": ", 1)[1] for ln in lines]
    assert body == [
        "started",
        "setup: importing torch",
        "compile: compiling (first call) (setup took 2.0 s)",
        "autotune: autotuning addmm (12 choices) (compile took 30.0 s)",
        # back to compiling 2 s after the autotune line: folded into it (one GEMM each would flood the log)
        "warm-up: warming up (compile took 6m 42s)",
        "timing: timing 30 samples x 12 calls (warm-up took 1.0 s)",
        "profiling (timing took 1.0 s)",
        "finished in 7m 19s",
    ]


def test_a_long_stage_is_not_silent():
    out = io.StringIO()
    p = Progress(out, tty=False, heartbeat_s=0.2)
    with p.mode("[1/1] default") as on_progress:
        on_progress("default", "compiling (first call)")
        time.sleep(5.5)  # the heartbeat thread wakes every min(heartbeat, 5 s)
    assert "[1/1] default: still compile (" in out.getvalue()


def test_tty_mode_redraws_one_line_and_leaves_nothing_behind():
    out = io.StringIO()
    p = Progress(out, tty=True, heartbeat_s=3600)
    with p.mode("[1/1] eager") as on_progress:
        on_progress("eager", "warming up")
        time.sleep(0.3)
    assert "still" not in out.getvalue()  # no heartbeat lines on a terminal: the live line ticks instead


def test_plain_lines_fit_the_width():
    # A long mode name and stage detail (the 1B Llama's run printed lines past COLUMNS=120): wrapped, indented.
    out, clock = io.StringIO(), Clock()
    p = Progress(out, tty=False, clock=clock, heartbeat_s=3600, width=80,
                 now=lambda: dt.datetime(2026, 12, 3, 7, 32, 2))
    with p.mode("[3/3] max-autotune:ATEN+TRITON+NVGEMM") as on_progress:
        on_progress("max-autotune:ATEN+TRITON+NVGEMM", "autotuning packed_linear_with_a_long_name (24 choices)")
    lines = out.getvalue().splitlines()
    assert max(len(ln) for ln in lines) <= 80
    assert lines[1:3] == ["2026-12-03 07:32:02 [3/3] max-autotune:ATEN+TRITON+NVGEMM: autotune: autotuning",
                          "    packed_linear_with_a_long_name (24 choices)"]


def test_tty_mode_shows_a_line_per_mode_running_at_once():
    # a round's later processes set up side by side (capture/rounds.py): one live display, a line each
    out = io.StringIO()
    p = Progress(out, tty=True, heartbeat_s=3600)
    with p.mode("[process 2/3, 1/2] eager") as first, p.mode("[process 2/3, 2/2] default") as second:
        first("eager", "waiting for its turn to time")
        second("default", "compiling (first call)")
        assert [s.line().split(" · ")[0] for s in p._live_states] == [
            "[process 2/3, 1/2] eager: waiting (waiting for its turn to time)",
            "[process 2/3, 2/2] default: compile (compiling (first call))"]
    assert p._live is None and p._live_states == []


def test_mode_lines_break_between_parts():
    # A mode's line at COLUMNS=120 broke inside its last part, leaving the GEMM count "1" alone on a line of the
    # CI log; it now breaks only between " · " parts, the rest indented, never wider than the console.
    from pathlib import Path

    from rich.console import Console

    from kernelscope.report.io import load_result
    from kernelscope.run.lines import print_mode_line

    run = load_result(Path(__file__).parent / "data" / "h200-torch2.14.1-kernelscope-run" / "llama-bf16")

    def lines_at(width: int) -> list[str]:
        out = io.StringIO()
        console = Console(file=out, width=width, highlight=False, soft_wrap=False)
        for m in run.modes:
            print_mode_line(console, f"[process 2/3, 1/3] {m.name}", m)
        return out.getvalue().splitlines()

    wide = lines_at(1000)
    assert len(wide) == len(run.modes) and all(ln.startswith("[process 2/3, 1/3] ") for ln in wide)  # label kept
    assert max(len(ln) for ln in wide) > 60  # the narrower widths below do break these lines
    for width in (60, 80, 120):
        lines = lines_at(width)
        assert max(len(ln) for ln in lines) <= width
        joined: list[str] = []
        for ln in lines:  # a continuation line starts with 4 spaces and holds whole parts
            if ln.startswith("    "):
                joined[-1] += " · " + ln[4:]
            else:
                joined.append(ln)
        assert joined == wide


def test_a_mode_lines_interval_has_four_significant_digits():
    # Two processes timed on a contended 2-core VM (0.648 and 122.3 ms): Student's t at 1 degree of freedom gave
    # an interval of 0.000-2702169658600001223350523265024.000 ms on the mode's line; now as the notes write it
    import dataclasses
    from pathlib import Path

    from rich.console import Console

    from kernelscope.report.io import load_result
    from kernelscope.run.lines import print_mode_line

    run = load_result(Path(__file__).parent / "data" / "h200-torch2.14.1-kernelscope-run" / "llama-bf16")
    m = next(m for m in run.modes if m.latency_ms is not None)
    lat = dataclasses.replace(m.latency_ms, processes=2, median=0.6087, low=2.5e-29, high=2.7021696586e30)
    out = io.StringIO()
    print_mode_line(Console(file=out, width=1000, highlight=False), m.name, dataclasses.replace(m, latency_ms=lat))
    line = out.getvalue()
    assert "median 0.609 ms over 2 processes (2.5e-29-2.702e+30)" in line, line
