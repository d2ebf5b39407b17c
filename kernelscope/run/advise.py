"""Fusion advice, run: the candidate settings (analysis/advice.py) profiled as modes of their own, like any other.

``profile --advise``: once every asked mode's first process ran, the advice is planned from what those processes
showed, and the candidates' first processes run in order of what their epilogues cost while the budget lasts; their
later processes (``--processes``) join the run's interleaved rounds, so a candidate is timed across processes with
the mode it improves, from the model the run built once and against the reference it computed once.
``kernelscope advise RUN_DIR``: the same candidates for a finished run, profiled after it (into RUN_DIR or --out),
each compared with the run's modes between the two runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from pathlib import Path
from typing import Any

from kernelscope import modelfile
from kernelscope.analysis.advice import ADVICE_MODES, AdvicePlan, advise, plan_advice
from kernelscope.analysis.facts import modes_with_facts
from kernelscope.analysis.mode import build_run_result, run_environment
from kernelscope.capture.modes import parse_modes
from kernelscope.capture.runner import CaptureOptions
from kernelscope.errors import ResultError, UsageError
from kernelscope.result import ModeResult, Note, RunResult


class Advisor:
    """Plans the advice after the run's first processes (``ModeRuns.after_first``) and runs the candidates' first
    processes within ``budget_s``: a candidate starts while the candidates' time so far plus the longest compiled
    first process of the run is under it (a compile is most of a first process); the rest are listed as not run."""

    def __init__(self, budget_s: float, gemm_backends: tuple[str, ...] | None, err: Any,
                 plan: AdvicePlan | None = None, device: str = "", estimate_s: float = 0.0) -> None:
        self.budget_s, self.gemm_backends, self.err, self.device = budget_s, gemm_backends, err, device
        self.plan = plan
        self.estimate_s = estimate_s  # a compiled first process's time before any ran here (a finished run's)
        self.not_run: dict[str, Note] = {}
        self.ran: list[str] = []

    def __call__(self, run: Any) -> None:
        if self.plan is None:
            modes = modes_with_facts(run.first_results(), run.run_dtype)
            self.plan = plan_advice(modes, run_environment(run.environment), self.device)
        plan = self.plan
        groups = sum(1 for e in plan.entries if e.candidates)
        self.err.print(f"advise: {len(plan.entries)} GEMM group(s) not all fused, {groups} with a setting to try; "
                       f"{len(plan.to_run)} candidate mode(s) to run within {self.budget_s:g} s"
                       + (f": {', '.join(plan.to_run)}" if plan.to_run else ""))
        spent = 0.0
        for name in plan.to_run:
            if run.fatal or run.interrupted:
                self.not_run[name] = Note("run-stopped", {})
                continue
            estimate = max(self.estimate_s, _longest_first_process(run))
            if spent + estimate >= self.budget_s:
                self.not_run[name] = Note("over-budget", {"budget_s": self.budget_s, "spent_s": round(spent, 1),
                                                          "estimate_s": round(estimate, 1)})
                continue
            (mode,) = parse_modes(name, self.gemm_backends)
            started = time.monotonic()
            run.first_process(run.add_mode(mode))
            spent += time.monotonic() - started
            self.ran.append(name)
        if self.not_run:
            self.err.print(f"advise: not run: {', '.join(self.not_run)} (--advise-budget {self.budget_s:g} s)")

    def with_advice(self, result: RunResult, between_runs: bool = False) -> RunResult:
        """``result`` with the advice read from its candidate modes, and the modes --advise added named in its
        settings."""
        if self.plan is None:
            return result
        added = [*result.settings.get(ADVICE_MODES, ()), *self.ran]
        return dataclasses.replace(
            result, settings={**result.settings, ADVICE_MODES: added, "advise_budget_s": self.budget_s},
            advice=advise(result, self.plan, self.not_run, self.ran if between_runs else ()))


def _longest_first_process(run: Any) -> float:
    """The longest first process of a compiled mode so far (0 before any)."""
    walls = [recs[0].wall_s for j, recs in run.job_recs.items()
             if recs and recs[0].wall_s and run.mode_defs[run.jobs[j][0]].compiled]
    return float(max(walls, default=0.0))


# ---------------------------------------------------------------------------------------------- a finished run
@dataclasses.dataclass(frozen=True, slots=True)
class FinishedRun:
    """What ``kernelscope advise`` reads of a finished run to profile its candidates the way it ran."""

    result: RunResult
    model: Path
    opts: CaptureOptions
    processes: int
    parallel_setup: str
    gemm_backends: tuple[str, ...] | None


def read_finished_run(run_dir: Path, model: Path | None, timeout: float | None) -> FinishedRun:
    """The run's result and how it ran (settings), its model file unchanged since: else a usage error."""
    from kernelscope.capture.modes import parse_backends
    from kernelscope.result_file import load_result

    result = load_result(run_dir)
    s = result.settings
    if s.get("source") == "analyze" or not result.model:
        raise ResultError(f"{run_dir} holds a trace analysed on its own: there is no model to run",
                          "profile the model with --advise instead")
    if result.points:
        raise UsageError(f"{run_dir} is a sweep: advice profiles a run of one shape",
                         "profile one shape (--set NAME=VALUE) with --advise")
    path = model or Path(result.model)
    if not path.is_file():
        raise UsageError(f"the run's model file {path} is not here", "pass it with --model PATH")
    if s.get("model_sha256") and hashlib.sha256(path.read_bytes()).hexdigest() != s["model_sha256"]:
        raise UsageError(f"{path} changed since the run: its candidates would profile another model",
                         "profile the model again with --advise")
    spec = modelfile.inspect_model_file(path)
    sets = dict(s.get("sets") or {})
    modelfile.check_sets(spec, sets)
    processes = int(s.get("processes") or 1)
    opts = CaptureOptions(
        model=spec.path, sets=sets, dtype=s["dtype"] if "dtype" in s else (result.dtype or None),
        device=result.device or "auto",
        warmup=int(s.get("warmup") or 10), repeats=int(s.get("repeats") or 30),
        profile_steps=int(s.get("profile_steps") or 3), timeout_s=float(timeout or s.get("timeout_s") or 900.0),
        freezing=s.get("freezing"), reference=bool(s.get("reference", True)), python=s.get("python"),
        cpu_pinning=str(s.get("cpu_pinning") or "fastest"), share_model=True)
    return FinishedRun(result, path, opts, processes, str(s.get("parallel_setup") or "auto"),
                       parse_backends(s.get("gemm_backends")))


def advise_finished_run(fin: FinishedRun, run_dir: Path, out_dir: Path, *, budget_s: float, err: Any,
                        progress: Any, command_line: str) -> tuple[RunResult, Any]:
    """Profile a finished run's candidates (those it lacks) into ``out_dir``: the merged result, and the ModeRuns
    (whether a signal stopped it)."""
    from kernelscope.run.prepare import load_calibration
    from kernelscope.run.profile import ModeRuns, run_result

    old = fin.result
    plan = plan_advice(old.modes, old.environment, old.device, skip=old.settings.get(ADVICE_MODES, ()))
    compiles = [m.first_call_s for m in old.modes if m.config and m.config.compiled and m.first_call_s]
    advisor = Advisor(budget_s, fin.gemm_backends, err, plan=plan, estimate_s=max(compiles, default=0.0))
    run = ModeRuns([], [], fin.opts, out_dir, processes=fin.processes, warm_compile=False, err=err,
                   progress=progress, dtype=old.dtype or None, parallel_setup=fin.parallel_setup)
    run.after_first = advisor
    run.run()
    cal_path, cal_data = load_calibration(None)
    new = run_result(run, {}, interp=None, device=old.device, cal_data=cal_data, cal_path=cal_path,
                     model_path=fin.opts.model, sweeps={}, input_sweep=False, command_line=command_line,
                     model=fin.model)
    return merged(old, new, out_dir, run_dir, advisor), run


def merged(old: RunResult, new: RunResult, out_dir: Path, run_dir: Path, advisor: Advisor) -> RunResult:
    """The finished run's modes and the candidates' in one result (paths relative to ``out_dir``), with every fact
    derived again over them and the advice read, each candidate compared between the two runs."""
    rebase = out_dir.resolve() != run_dir.resolve()
    modes = [_rebased(m, run_dir, out_dir) if rebase else m for m in old.modes] + list(new.modes)
    result = build_run_result(modes, environment=old.environment, command=old.command, model=old.model,
                              device=old.device, dtype=old.dtype, settings=dict(old.settings),
                              findings=old.findings, peaks=old.peaks)
    return advisor.with_advice(result, between_runs=True)


def _rebased(m: ModeResult, run_dir: Path, out_dir: Path) -> ModeResult:
    """A mode of the finished run whose files stay in ``run_dir``, as seen from ``out_dir``."""
    def at(p: str | None) -> str | None:
        if not p or os.path.isabs(p):
            return p
        return os.path.relpath(run_dir.resolve() / p, out_dir.resolve())

    return dataclasses.replace(m, trace=at(m.trace), log=at(m.log),
                               inductor_code=tuple(at(p) or p for p in m.inductor_code),
                               ranks=tuple(dataclasses.replace(r, trace=at(r.trace), capture=at(r.capture))
                                           for r in m.ranks))
