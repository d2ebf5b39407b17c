"""``kernelscope upgrade-check``'s run: each mode once per side (the install before the upgrade and after it), the
sides' processes interleaved (eager before, eager after, default after, default before, ...: alternating which
side goes first, so drift on the machine over the run, a warming GPU, a neighbour's job, lands on both sides alike
rather than on whichever ran second), then the later, timing-only processes in the same order."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelscope.analysis.mode import build_run_result, run_environment
from kernelscope.analysis.ranks import build_any_mode_result
from kernelscope.analysis.roofline import peaks_for, with_roofline
from kernelscope.capture.interpreter import probe
from kernelscope.capture.modes import ModeDef
from kernelscope.capture.runner import (
    CaptureOptions,
    check_torch_logs,
    merge_processes,
    merge_ranks,
    merge_warm,
    run_mode,
)
from kernelscope.capture_record import CAPTURE_FILE, CaptureRecord, Environment, read_capture, write_capture
from kernelscope.outdir import prepare_out_dir
from kernelscope.report.progress import Progress
from kernelscope.result import ModeResult, RunResult, to_json
from kernelscope.run.lines import print_mode_line
from kernelscope.run.status import pending, skipped, stop_signal

SIDES = ("before", "after")


def interpreters(before_py: str, after_py: str | None) -> dict[str, Any]:
    """Both interpreters, checked before anything runs: one subprocess each (and TORCH_LOGS under each)."""
    interp = {"before": probe(before_py, "--before"), "after": probe(after_py or sys.executable, "--after")}
    for side in SIDES:
        check_torch_logs(interp[side].path)
    return interp


def out_dirs(out: Path, force: bool) -> tuple[Path, dict[str, Path]]:
    """DIR and DIR/before, DIR/after, emptied; an earlier comparison's files removed."""
    top = prepare_out_dir(out, force=force)
    dirs = {side: prepare_out_dir(top / side, force=True) for side in SIDES}
    for name in ("compare.json", "compare.md", "compare.html"):
        (top / name).unlink(missing_ok=True)
    return top, dirs


class SideRuns:
    """Every mode's processes on both sides. A mode is analysed when nothing more runs for it and its side's
    result.json written again (``save``); on SIGINT/SIGTERM the modes that ran are kept and the others read
    ``interrupted``."""

    def __init__(self, mode_defs: list[ModeDef], opts: dict[str, CaptureOptions], dirs: dict[str, Path],
                 interp: dict[str, Any], *, processes: int, warm_compile: bool, err: Any, dtype: str | None) -> None:
        self.mode_defs, self.opts, self.dirs, self.interp = mode_defs, opts, dirs, interp
        self.processes, self.warm_compile, self.err = processes, warm_compile, err
        self.results: dict[str, list[ModeResult | None]] = {side: [None] * len(mode_defs) for side in SIDES}
        self.environment: dict[str, Environment | None] = {side: None for side in SIDES}  # each side's first record
        self.run_dtype: dict[str, str | None] = {side: dtype for side in SIDES}
        self.fatal: tuple[str, str] | None = None
        self.interrupted: str | None = None  # the signal that stopped the run
        self.running: str | None = None  # the worker running now; ``during`` once a signal stopped it
        self.during: str | None = None
        self.save: Callable[[str], object] | None = None  # writes a side's result.json
        self.jobs = [(mi, side) for mi in range(len(mode_defs))
                     for side in (SIDES if mi % 2 == 0 else tuple(reversed(SIDES)))]
        self.firsts: dict[int, CaptureRecord] = {}
        self.later: dict[int, list[CaptureRecord]] = {}

    def label(self, j: int) -> str:
        mi, side = self.jobs[j]
        return f"[{j + 1}/{len(self.jobs)}] {self.mode_defs[mi].name} ({side}, torch {self.interp[side].torch})"

    def capture(self, j: int, label: str, *, warm: bool, process: int = 1) -> CaptureRecord:
        mi, side = self.jobs[j]
        tag = f"{label}{' (warm compile)' if warm else ''}"
        self.running = f"{self.mode_defs[mi].name} ({side}{', warm compile' if warm else ''}" + (
            f", process {process})" if process > 1 else ")")
        with Progress(sys.stderr).mode(tag) as on_progress:
            rec = run_mode(self.mode_defs[mi], self.opts[side], self.dirs[side], on_progress, warm=warm,
                           process=process)
        self.running = None
        return rec

    def run(self) -> None:
        """Every mode's processes on both sides; after SIGINT/SIGTERM (or an error that stops the run) the modes
        that ran are analysed with the processes they had, the others marked as not run."""
        try:
            self.first_processes()
            self.later_processes()
        except KeyboardInterrupt:
            self.stopped()
        for j, (mi, side) in enumerate(self.jobs):
            if j in self.firsts and self.results[side][mi] is None:
                self.finish(j)
            elif self.results[side][mi] is None:
                self.results[side][mi] = skipped(self.mode_defs[mi].name, self.fatal, self.interrupted)

    def stopped(self) -> None:
        self.interrupted = self.interrupted or stop_signal()
        self.during = self.during or self.running

    def first_processes(self) -> None:
        for j, (_, side) in enumerate(self.jobs):
            if self.fatal or self.interrupted:
                return
            rec = self._first_process(j, self.label(j))
            if rec.environment and self.environment[side] is None:
                self.environment[side] = rec.environment
            self.run_dtype[side] = self.run_dtype[side] or rec.dtype
            self.firsts[j] = rec
            self.later[j] = []
            if rec.error_kind in ("model", "usage", "forward") and not self.fatal:
                self.fatal = (rec.error_kind, rec.error)
            if self.processes == 1 or rec.status != "ok":
                self.finish(j)  # nothing more runs for it

    def _first_process(self, j: int, label: str) -> CaptureRecord:
        """Process 1 of a mode on one side (and its warm-compile process)."""
        mi, side = self.jobs[j]
        mode = self.mode_defs[mi]
        path = self.dirs[side] / "modes" / mode.dirname / CAPTURE_FILE
        try:
            rec = self.capture(j, label, warm=False)
            if self.warm_compile and mode.compiled and rec.status == "ok":
                warm = self.capture(j, label, warm=True)
                rec = merge_ranks(self.dirs[side], rec, [warm], lambda a, o: merge_warm(a, o[0]))
                write_capture(path, rec)
        except KeyboardInterrupt:
            self.stopped()
            rec = read_capture(path) or CaptureRecord(mode=mode.name, status="interrupted", error_kind="interrupted",
                                                      error=f"interrupted ({self.interrupted}) while it ran")
        return rec

    def later_processes(self) -> None:
        """Timing only, on each side's own Inductor cache, in the same interleaved order."""
        for process in range(2, self.processes + 1):
            for j, (mi, side) in enumerate(self.jobs):
                if self.fatal or self.interrupted:
                    return
                if j not in self.firsts or self.results[side][mi] is not None:
                    continue  # not run, or failed in its first process
                label = f"[process {process}/{self.processes}] {self.mode_defs[mi].name} ({side})"
                self.later[j].append(self.capture(j, label, warm=False, process=process))
                if process == self.processes:
                    self.finish(j)

    def finish(self, j: int) -> None:
        """A mode on one side: its processes' timings merged into the first one's record, analysed, its line
        printed, the side's result.json written."""
        mi, side = self.jobs[j]
        rec = self.firsts[j]
        if self.later[j]:
            rec = merge_ranks(self.dirs[side], rec, self.later[j], merge_processes)
            write_capture(self.dirs[side] / "modes" / self.mode_defs[mi].dirname / CAPTURE_FILE, rec)
        mr = build_any_mode_result(self.dirs[side], rec)
        self.results[side][mi] = mr
        print_mode_line(self.err, self.label(j), mr)
        if self.save is not None:
            self.save(side)

    def kept(self) -> str:
        """The mode runs a stopped run kept (with their status when not ok), or "no finished mode"."""
        names = [f"{m.name} ({side}{'' if m.status == 'ok' else ': ' + m.status})" for mi in range(len(self.mode_defs))
                 for side in SIDES if (m := self.results[side][mi]) is not None and m.status != "interrupted"]
        return ", ".join(names) or "no finished mode"


def side_result(run: SideRuns, side: str, settings: dict[str, Any], *, device: str, cal_data: Any,
                cal_path: Path, command_line: str, model: Path) -> RunResult:
    """One side's RunResult, with the roofline on its device's peaks; a mode still to run reads as pending."""
    env = run_environment(run.environment[side], run.interp[side].as_dict())
    peaks = peaks_for(to_json(env), cal_data, str(cal_path)) if run.environment[side] else {}
    row = [dataclasses.replace(m, gemms=with_roofline(m.gemms, peaks)) if m is not None else pending(d.name)
           for m, d in zip(run.results[side], run.mode_defs)]
    resolved_device = env.device or (device if device != "auto" else "")
    return build_run_result(row, environment=env, command=command_line, model=str(model), device=resolved_device,
                            dtype=run.run_dtype[side] or "", settings=settings, peaks=peaks)
