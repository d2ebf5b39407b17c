"""``kernelscope profile``'s run: every mode's worker processes in order, each mode analysed as it finishes.

A job is a mode at one shape point, or the dynamic mode at all of them, in one worker. Process 1 of every job
runs first (compile, timing, numerics, profile), then each later process of every job in the same order (eager,
default, max-autotune, eager, default, ...), so that drift on the machine (clocks, another job) meets every mode
alike. The later processes set up side by side and time one at a time (capture/rounds.py); where the run allows
it, every process of the run starts at once, ahead of its turn (``ModeRuns.staged``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from kernelscope.analysis.mode import build_run_result, run_environment, timed_in_fewer_processes, trace_fields
from kernelscope.analysis.ranks import build_any_mode_result
from kernelscope.analysis.roofline import peaks_for, with_roofline
from kernelscope.capture.modes import ModeDef
from kernelscope.capture.rounds import Hold, Staged, groups, make_gate, together
from kernelscope.capture.runner import (
    CaptureOptions,
    drop_model_cache,
    merge_processes,
    merge_ranks,
    merge_warm,
    run_mode,
    run_mode_at,
    run_mode_points,
)
from kernelscope.capture_record import CAPTURE_FILE, CaptureRecord, Environment, read_capture, write_capture
from kernelscope.report.progress import Progress
from kernelscope.result import ModeResult, RunEnvironment, RunResult, SweepPoint, to_json
from kernelscope.run.lines import print_first_process_line, print_mode_line
from kernelscope.run.status import pending, skipped, stop_signal
from kernelscope.sweep_plan import PointPlan

STAGED_MOST = 16  # processes of a run started ahead of their turn at most, with --parallel-setup auto
STAGED_RSS = 2**30  # what a waiting process holds in host memory: Python, torch, the model file's imports


class ModeRuns:
    """The run's jobs and what they produced. A job is analysed as soon as nothing more runs for it (after its last
    process, or its first when that failed), and result.json is written again then (``save``), so a run that
    dies keeps every mode that finished; on SIGINT/SIGTERM the rest read ``interrupted``."""

    def __init__(self, mode_defs: list[ModeDef], points: list[PointPlan], opts: CaptureOptions, out_dir: Path, *,
                 processes: int, warm_compile: bool, err: Any, progress: Progress, dtype: str | None,
                 parallel_setup: str = "off") -> None:
        self.mode_defs, self.points, self.opts, self.out_dir = mode_defs, points, opts, out_dir
        self.processes, self.warm_compile, self.err, self.progress = processes, warm_compile, err, progress
        self.parallel_setup = parallel_setup
        # results[point index][mode index]; a run without a sweep is one point.
        n_points = max(1, len(points))
        self.results: list[list[ModeResult | None]] = [[None] * len(mode_defs) for _ in range(n_points)]
        # the results with the roofline, a job still to come as pending (run_result)
        self.grid: list[list[ModeResult]] = []
        self.environment: Environment | None = None  # the first worker's record of the environment
        self.fatal: tuple[str, str] | None = None
        self.interrupted: str | None = None  # the signal that stopped the run ("SIGTERM")
        self.running: str | None = None  # the worker running now; ``during`` once a signal stopped it
        self.during: str | None = None
        self.save: Callable[[], object] | None = None  # writes result.json
        # imports the reports' code ahead (report.prepare), once, while later processes compile
        self.prepare_reports: Callable[[], object] | None = None
        self.run_dtype: str | None = dtype
        self.jobs: list[tuple[int, list[int]]] = []  # (mode index, point indices one worker measures)
        for mi, mode in enumerate(mode_defs):
            if mode.dynamic or not points:
                self.jobs.append((mi, list(range(n_points))))
            else:
                self.jobs.extend((mi, [pi]) for pi in range(n_points))
        self.job_recs: dict[int, list[CaptureRecord]] = {}  # job -> one capture record per point (first process)
        self.later: dict[int, list[list[CaptureRecord]]] = {j: [] for j in range(len(self.jobs))}  # per later process
        self.done: set[int] = set()  # jobs analysed
        # job -> its first process's files analysed ahead (one per point), while its later processes compile
        self.traced: dict[int, list[Any]] = {}
        # --advise (run/advise.py): called once every first process has run, it may add modes (``add_mode``) and
        # run their first processes; their later processes then join the run's interleaved rounds. A mode added
        # so is a candidate: its failure does not stop the run.
        self.after_first: Callable[[ModeRuns], object] | None = None
        self.added: list[str] = []

    # ------------------------------------------------------------------------------------------- names and places
    def label(self, j: int, process: int = 1) -> str:
        mi, pis = self.jobs[j]
        where = ""
        if self.points:
            where = f" @ {self.points[pis[0]].label}" if len(pis) == 1 else f" @ {len(pis)} shapes"
        n = len(self.jobs)
        head = f"[{j + 1}/{n}]" if process == 1 else f"[process {process}/{self.processes}, {j + 1}/{n}]"
        return f"{head} {self.mode_defs[mi].name}{where}"

    def point_label(self, j: int, pi: int) -> str:
        """A job's line for one of its points (the dynamic mode's job measures several)."""
        label = self.label(j)
        return label if len(self.jobs[j][1]) == 1 else f"{label.split(' @ ')[0]} @ {self.points[pi].label}"

    def record_dir(self, mi: int, pi: int) -> Path:
        mode = self.mode_defs[mi]
        return (self.out_dir / "modes" / mode.dirname) if not self.points else (
            self.out_dir / "points" / self.points[pi].dirname / "modes" / mode.dirname)

    def _process_dirs(self, workers: list[tuple[int, int]]) -> dict[tuple[int, int], Path]:
        """Each (process, job)'s folder, made: the job's record folder for its first process, process-N below."""
        dirs = {}
        for process, j in workers:
            mi, (pi,) = self.jobs[j]
            d = self.record_dir(mi, pi) / (f"process-{process}" if process > 1 else "")
            d.mkdir(parents=True, exist_ok=True)
            dirs[process, j] = d
        return dirs

    def _running(self, j: int, process: int = 1) -> str:
        """How an interrupted run names the worker it stopped ("default", "default (process 2)")."""
        return self.label(j, process).split("] ", 1)[1] + (f" (process {process})" if process > 1 else "")

    # ----------------------------------------------------------------------------------------------- one worker
    def capture(self, j: int, warm: bool, process: int = 1, hold: Hold | None = None) -> list[CaptureRecord]:
        """Run one worker of job j (``hold``: a later process held before its warm-up, capture/rounds.py)."""
        mi, pis = self.jobs[j]
        mode, points = self.mode_defs[mi], self.points
        tag = f"{self.label(j, process)}{' (warm compile)' if warm else ''}"
        staged = hold is not None and hold.pre is not None  # started ahead of its turn: the parent says who runs
        if not staged:
            self.running = self._running(j, process)
        with self.progress.mode(tag) as on_progress:
            kw: dict[str, Any] = {"warm": warm, "process": process}
            if not points:
                recs = [run_mode(mode, self.opts, self.out_dir, on_progress, hold=hold, **kw)]
            elif len(pis) > 1 or mode.dynamic:
                recs = run_mode_points(mode, self.opts, self.out_dir, [points[i] for i in pis], on_progress, **kw)
            else:
                recs = [run_mode_at(mode, self.opts, self.out_dir, points[pis[0]], on_progress, hold=hold, **kw)]
        if not staged:
            self.running = None
        return recs

    # -------------------------------------------------------------------------------------------------- the run
    def run(self) -> None:
        """Every job's processes; after SIGINT/SIGTERM (or an error that stops the run) the jobs that ran are
        analysed with the processes they had, and the others marked as not run."""
        try:
            if not self.staged():
                self.first_processes()
                if self.after_first is not None and not (self.fatal or self.interrupted):
                    self.after_first(self)
                self.later_processes()
        except KeyboardInterrupt:
            self.stopped()
        finally:
            drop_model_cache(self.out_dir)  # the model built once for the run (capture/model_cache.py)
        for j in range(len(self.jobs)):
            if j in self.job_recs and j not in self.done:
                self.finish(j)
            elif j not in self.job_recs:
                mi, pis = self.jobs[j]
                for pi in pis:
                    self.results[pi][mi] = skipped(self.mode_defs[mi].name, self.fatal, self.interrupted)

    def stopped(self) -> None:
        self.interrupted = self.interrupted or stop_signal()
        self.during = self.during or self.running

    def first_processes(self) -> None:
        for j in range(len(self.jobs)):
            if self.fatal or self.interrupted:
                return
            self.first_process(j)

    def first_process(self, j: int) -> None:
        """Job j's first process, analysed at once when nothing more runs for it."""
        recs = self._first_process(j)
        self.job_recs[j] = recs
        self._note(recs, candidate=self.mode_defs[self.jobs[j][0]].name in self.added)
        if self.processes == 1 or not any(r.status == "ok" for r in recs):
            self.finish(j)  # nothing more runs for it: a mode that failed is not timed again
        else:
            for pi, rec in zip(self.jobs[j][1], recs):
                print_first_process_line(self.err, self.point_label(j, pi), rec)

    def add_mode(self, mode: ModeDef) -> int:
        """A mode added once the first processes ran (a candidate of --advise; no sweep): its job's index."""
        assert not self.points, "modes are added to a run of one shape"
        self.mode_defs.append(mode)
        self.added.append(mode.name)
        for row in self.results:
            row.append(None)
        self.jobs.append((len(self.mode_defs) - 1, [0]))
        self.later[len(self.jobs) - 1] = []
        return len(self.jobs) - 1

    def first_results(self) -> list[ModeResult]:
        """Each job's result as its first process measured it (a job still to be timed again is analysed from its
        first process's files, which ``finish`` then reuses)."""
        out = []
        for j, (mi, _) in enumerate(self.jobs):
            if j not in self.job_recs:
                continue
            done = self.results[0][mi]
            if done is not None:
                out.append(done)
                continue
            self.trace_ahead(j)
            ahead = self.traced.get(j, [None])[0]
            out.append(build_any_mode_result(self.out_dir, self.job_recs[j][0], traced=ahead))
        return out

    def _first_process(self, j: int) -> list[CaptureRecord]:
        """Process 1 of a job (and its warm-compile process): one capture record per point."""
        mi, pis = self.jobs[j]
        mode = self.mode_defs[mi]
        try:
            recs = self.capture(j, False)
            if self.warm_compile and mode.compiled and any(r.status == "ok" for r in recs):
                warm_recs = self.capture(j, True)
                recs = [merge_ranks(self.out_dir, c, [w], lambda a, o: merge_warm(a, o[0]))
                        for c, w in zip(recs, warm_recs)]
                for pi, rec in zip(pis, recs):
                    write_capture(self.record_dir(mi, pi) / CAPTURE_FILE, rec)
        except KeyboardInterrupt:
            recs = self._stopped_recs(j)
        return recs

    def _stopped_recs(self, j: int) -> list[CaptureRecord]:
        """A first process stopped by SIGINT/SIGTERM: what the worker (or the runner, for it) wrote (a finished
        cold process when the warm one was stopped), else an interrupted record."""
        self.stopped()
        mi, pis = self.jobs[j]
        return [read_capture(self.record_dir(mi, pi) / CAPTURE_FILE) or CaptureRecord(
            mode=self.mode_defs[mi].name, status="interrupted", error_kind="interrupted",
            error=f"interrupted ({self.interrupted}) while it ran") for pi in pis]

    def _note(self, recs: list[CaptureRecord], candidate: bool = False) -> None:
        """The first environment a worker reported, and the first error that stops the run (never a candidate's:
        the setting failed, not the model)."""
        for rec in recs:
            if rec.environment and self.environment is None:
                self.environment = rec.environment
            if candidate:
                continue
            # A broken model file stops the run; in a sweep a forward that raises at one shape (a size the model
            # does not accept) fails that point only.
            fatal_kinds = ("model", "usage") if self.points else ("model", "usage", "forward")
            if rec.error_kind in fatal_kinds and not self.fatal:
                self.fatal = (rec.error_kind, rec.error)

    def later_processes(self) -> None:
        """Processes 2..N of every job whose first process ran, in the order (process 2 of every job, then process
        3 of every job, ...), in groups that set up side by side and time one at a time (capture/rounds.py): with
        room for them, every later process of the run is one group (one setting up instead of one per round);
        a job is analysed after its last one."""
        # a job analysed already (its first process failed: it is not timed again) has no later process
        todo = [(process, j) for process in range(2, self.processes + 1)
                for j in range(len(self.jobs)) if j in self.job_recs and j not in self.done]
        for group in self._groups(todo):
            if self.fatal or self.interrupted:
                return
            try:
                for (_, j), recs in zip(group, self._group(group)):
                    self.later[j].append(recs)
            except KeyboardInterrupt as stop:
                finished = stop.args[0] if stop.args and isinstance(stop.args[0], list) else []
                for (_, j), recs in zip(group, finished):
                    self.later[j].append(recs)  # the processes of the group that finished
                raise
            for process, j in group:
                if process == self.processes:
                    self.finish(j)

    def _most(self) -> int | None:
        """How many processes may set up side by side: any number with --parallel-setup on, else one per two
        CPUs (on the 2-core VM two setups side by side took as long as one after the other)."""
        return None if self.parallel_setup == "on" else max(1, len(os.sched_getaffinity(0)) // 2)

    def _groups(self, todo: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
        """The later processes ((process, job) in order) in groups that set up together: as many as fit in half
        the device's memory at their jobs' first processes' peaks (--parallel-setup auto: and one per two CPUs);
        one by one with --parallel-setup off, under torchrun, or for a multi-point job."""
        if self.parallel_setup == "off" or self.opts.nproc or any(
                len(self.jobs[j][1]) > 1 or self.mode_defs[self.jobs[j][0]].dynamic for _, j in todo):
            return [[t] for t in todo]
        peaks, memory = [], None
        for _, j in todo:
            rec = self.job_recs[j][0]
            mem, env = rec.memory, rec.environment
            peak = (mem.first_call_peak_reserved_bytes if rec.device == "cuda" else mem.first_call_peak_rss_bytes
                    ) if mem else None
            peaks.append(peak if isinstance(peak, int) else None)
            if rec.device == "cuda" and env and isinstance(env.gpu_memory_bytes, int):
                memory = env.gpu_memory_bytes
            elif rec.device == "cpu":
                memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return [[todo[i] for i in g] for g in groups(peaks, memory, self._most())]

    def _group(self, group: list[tuple[int, int]]) -> list[list[CaptureRecord]]:
        """Each (process, job) of the group: set up together, timed in order (a group of one: just run).
        SIGINT/SIGTERM: KeyboardInterrupt with the records of those that finished."""
        gates = [d / "gate" for d in self._process_dirs(group).values()]
        if len(group) == 1 or not all(make_gate(g) for g in gates):
            done: list[list[CaptureRecord]] = []
            for process, j in group:
                try:
                    done.append(self.capture(j, False, process))
                except KeyboardInterrupt:
                    raise KeyboardInterrupt(done) from None
            return done
        try:
            return together([partial(self.capture, j, False, process) for process, j in group], gates)
        finally:
            _remove(gates)

    # ------------------------------------------------------------------------------- every process started ahead
    def staged(self) -> bool:
        """Every process of the run started at once, ahead of its turn (capture/rounds.py ``Staged``): each sets
        up (imports, environment, the model file, loading the model the first process built) beside the others,
        then waits, idle, with its model on the CPU; the first processes then run one at a time in the run's order
        (reference, compile, timing, profile), each with the machine to itself; then the later processes compile
        from their mode's cache side by side (in groups that fit in memory) and time one at a time, as in
        ``later_processes``. On the H200 the setting up of a 1B Llama's later processes (~35 s) and of the
        compiled modes' first processes (~10 s each) had each been on the run's critical path. False (nothing
        started) where it does not apply: --parallel-setup off or auto with under 4 CPUs, torchrun, a multi-point
        (dynamic) job, --warm-compile, --advise (its modes are known once the first processes ran), or an output
        folder that cannot hold a FIFO; the run then goes process by process."""
        most = self._most()
        later = self._staged_later(most)
        if later is None:
            return False
        workers = [(1, j) for j in range(len(self.jobs))] + later
        dirs = self._process_dirs(workers)
        gates = [d / name for (process, _), d in dirs.items() for name in (("pre-gate", "gate") if process > 1
                                                                             else ("pre-gate",))]
        if not all(make_gate(g) for g in gates):
            _remove(gates)
            return False
        st, index, ended = self._start_ahead(most, workers, dirs)
        try:
            self._staged_first_processes(st, index, later)
            self._staged_later_processes(st, index, later)
        finally:
            st.stop()
            _remove(gates)
            _remove(ended)
        return True

    def _staged_later(self, most: int | None) -> list[tuple[int, int]] | None:
        """The later processes ((process, job) in order) of a run that starts every process ahead; None where
        it does not (see ``staged``)."""
        if self.parallel_setup == "off" or most == 1 or self.opts.nproc or self.warm_compile or any(
                len(pis) > 1 or self.mode_defs[mi].dynamic for mi, pis in self.jobs) or self.after_first:
            return None
        later = [(process, j) for process in range(2, self.processes + 1) for j in range(len(self.jobs))]
        if self.parallel_setup == "auto" and not _room_for(len(self.jobs) + len(later)):
            return None
        return later

    def _start_ahead(self, most: int | None, workers: list[tuple[int, int]], dirs: dict[tuple[int, int], Path]
                     ) -> tuple[Staged, dict[tuple[int, int], int], list[Path]]:
        """Every worker added to a ``Staged`` with its gates (index: (process, job) -> its place there), and the
        files that say a model's builder has ended."""
        # The model at each shape point is built by the first job there; every other worker at that point waits
        # for its file, or for that worker to end (then builds it too, with a note)
        builder: dict[int, int] = {}
        for j, (_, (pi,)) in enumerate(self.jobs):
            builder.setdefault(pi, j)
        ended = {j: dirs[1, j] / "builder-ended" for j in builder.values()}
        _remove(ended.values())
        st = Staged(most)
        n = len(dirs)
        index: dict[tuple[int, int], int] = {}
        for process, j in workers:
            pi = self.jobs[j][1][0]
            b = builder[pi]
            hold = Hold(gate=dirs[process, j] / "gate" if process > 1 else None, waits_for=n,
                        pre=dirs[process, j] / "pre-gate", model_from=None if (process, j) == (1, b) else ended[b])
            on_end = ended[b].touch if (process, j) == (1, b) else None
            index[process, j] = st.add(partial(self.capture, j, False, process), hold, on_end)
        return st, index, list(ended.values())

    def _staged_first_processes(self, st: Staged, index: dict[tuple[int, int], int],
                                later: list[tuple[int, int]]) -> None:
        """The first processes, released one at a time once every started worker waits."""
        for j in range(len(self.jobs)):
            st.settle()  # every process started and waiting (or ended) before this one goes on
            if self.fatal or self.interrupted:
                return
            i = index[1, j]
            self.running = self._running(j)
            st.release(i)
            mi, pis = self.jobs[j]
            try:
                recs = st.join(i)
            except KeyboardInterrupt:
                # what it wrote before it was stopped (its record once killed says "killed by signal 9")
                self.job_recs[j] = recs = self._stopped_recs(j)
                st.stop()
                for pi, rec in zip(pis, recs):
                    write_capture(self.record_dir(mi, pi) / CAPTURE_FILE, rec)
                raise
            self.running = None
            self.job_recs[j] = recs
            self._note(recs)
            if self.processes == 1 or not any(r.status == "ok" for r in recs):
                self.finish(j)  # nothing more runs for it: a mode that failed is not timed again
                st.stop([index[p, k] for p, k in later if k == j])
            else:
                for pi, rec in zip(pis, recs):
                    print_first_process_line(self.err, self.point_label(j, pi), rec)

    def _staged_later_processes(self, st: Staged, index: dict[tuple[int, int], int],
                                later: list[tuple[int, int]]) -> None:
        """The later processes by groups: they compile from their mode's cache side by side, then time one at
        a time; meanwhile the first processes' files are analysed and the reports prepared."""
        if self.fatal or self.interrupted:
            return
        todo = [(p, j) for p, j in later if j not in self.done]
        for group in self._groups(todo):
            if self.fatal or self.interrupted:
                return
            members = [index[t] for t in group]
            st.settle()
            for i in members:
                st.release(i)  # they compile from their mode's cache side by side
            for j in dict.fromkeys(j for _, j in group):
                self.trace_ahead(j)  # meanwhile: nothing times now, and after the timings nothing waits for it
            self._prepare_reports()
            st.settle()  # each waits before its warm-up (or ended)
            for (process, j), i in zip(group, members):
                self.running = self._running(j, process)
                st.release(i)
                self.later[j].append(st.join(i))
                self.running = None
                if process == self.processes:
                    self.finish(j)

    def trace_ahead(self, j: int) -> None:
        """Analyse job j's first-process files (trace, output code, compile log) now, so that finish() only adds
        the later processes' timings: with the staged run the analysis otherwise came between the later timings
        and after the last one, with nothing else running. Not for a torchrun group (never staged)."""
        if j in self.traced or j not in self.job_recs or any(r.rank_records for r in self.job_recs[j]):
            return
        try:
            self.traced[j] = [trace_fields(self.out_dir, rec) for rec in self.job_recs[j]]
        except Exception:  # noqa: BLE001 - finish() analyses it again in its turn, and fails there as it would
            return

    def _prepare_reports(self) -> None:
        """The reports' imports and template ahead, once (the run's last seconds then only render); a failure
        here is left for write_reports to meet and report in its turn."""
        prepare, self.prepare_reports = self.prepare_reports, None
        if prepare is not None:
            try:
                prepare()
            except Exception:  # noqa: BLE001
                pass

    # ------------------------------------------------------------------------------------------ a job's results
    def finish(self, j: int) -> None:
        """Analyse a job's capture records (every process that ran merged into the first's) into ModeResults,
        print their lines, write result.json."""
        mi, pis = self.jobs[j]
        recs = self.job_recs[j]
        if self.later[j]:
            recs = [merge_ranks(self.out_dir, rec, [rnd[q] for rnd in self.later[j]], merge_processes)
                    for q, rec in enumerate(recs)]
            for pi, rec in zip(pis, recs):
                write_capture(self.record_dir(mi, pi) / CAPTURE_FILE, rec)
        ran = 1 + len(self.later[j])
        traced = self.traced.pop(j, [None] * len(recs))
        for pi, rec, ahead in zip(pis, recs, traced):
            self.run_dtype = self.run_dtype or rec.dtype
            mr = build_any_mode_result(self.out_dir, rec, traced=ahead)
            if self.interrupted and mr.status == "ok" and ran < self.processes:
                mr = timed_in_fewer_processes(mr, ran, self.processes, self.interrupted)
            self.results[pi][mi] = mr
            print_mode_line(self.err, self.point_label(j, pi), mr)
        self.done.add(j)
        if self.save is not None and not self.never_ran():
            self.save()

    def never_ran(self) -> bool:
        """The model file could not be loaded or built (a model or usage error) and no mode ran: no report."""
        return (self.fatal is not None and self.fatal[0] in ("model", "usage")
                and not any(m is not None and m.status == "ok" for row in self.results for m in row))

    def kept(self) -> str:
        """What a stopped run kept: its finished modes (with their status when not ok) or "no finished mode"."""
        names = [f"{m.name}{' @ ' + label if label else ''}{'' if m.status == 'ok' else f' ({m.status})'}"
                 for row, label in zip(self.grid, [p.label for p in self.points] or [""])
                 for m in row if m.status != "interrupted"]
        if len(names) > 6:
            return f"{len(names)} mode runs ({', '.join(names[:3])}, ...)"
        return ", ".join(names) or "no finished mode"


def _remove(paths: Iterable[Path]) -> None:
    for p in paths:
        p.unlink(missing_ok=True)


def _room_for(workers: int, meminfo: str = "/proc/meminfo") -> bool:
    """Whether ``workers`` processes may wait side by side (--parallel-setup auto): at most STAGED_MOST (a sweep's
    4 points x 3 modes x 3 processes would be 36), each counted at STAGED_RSS against half of the memory Linux
    says is available now. The model itself is mapped from one file on CUDA; on the CPU device each process reads
    its own copy, which this rule of thumb does not see. Not Linux: no."""
    try:
        with open(meminfo, encoding="ascii") as f:
            kib = next(int(ln.split()[1]) for ln in f if ln.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return False
    return workers <= STAGED_MOST and workers * STAGED_RSS <= kib * 1024 // 2


def run_result(run: ModeRuns, asked: dict[str, Any], *, interp: Any, device: str, cal_data: Any, cal_path: Path,
               model_path: str, sweeps: dict[str, list[Any]], input_sweep: bool, command_line: str,
               model: Path) -> RunResult:
    """The RunResult: the modes' results with the roofline (the device's peaks are known once a worker reported
    the environment), the sweep's points, and the settings ``compare`` reads to say whether two runs compare."""
    environment = run_environment(run.environment, interp.as_dict() if interp is not None else None)
    resolved_device = environment.device or (device if device != "auto" else "")
    peaks = peaks_for(to_json(environment), cal_data, str(cal_path)) if environment != RunEnvironment() else {}
    run.grid = [[dataclasses.replace(m, gemms=with_roofline(m.gemms, peaks)) if m is not None else pending(d.name)
                 for m, d in zip(row, run.mode_defs)] for row in run.results]
    points = run.points
    sweep_points = [SweepPoint(params=p.params, label=p.label, modes=tuple(run.grid[p.index])) for p in points]
    settings = dict(asked)
    # What `compare` needs to say whether two runs are comparable: the model file's content and the inputs'
    # shapes as the workers built them.
    settings["model_sha256"] = hashlib.sha256(Path(model_path).read_bytes()).hexdigest()
    settings["inputs"] = next((r.inputs for recs in run.job_recs.values() for r in recs if r.inputs), None)
    if points:
        settings["sweep"] = {k: v for k, v in sweeps.items()}
        settings["input_sweep"] = input_sweep
    if peaks.get("calibrated"):
        settings["calibration"] = str(cal_path)
    return build_run_result(
        run.grid[0], environment=environment, command=command_line, model=str(model), device=resolved_device,
        dtype=run.run_dtype or "", settings=settings, points=sweep_points, peaks=peaks,
    )
