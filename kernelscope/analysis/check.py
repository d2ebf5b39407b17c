"""The CI gate's rules (``kernelscope check``), evaluated on a result: each violated rule becomes one line.

Which modes a rule looks at: the ``--mode`` names, or by default every mode except eager (the rules are about
what compilation did). A checked mode that did not run (failed, timeout, interrupted) violates every rule, since
none can be shown to hold; an ``unavailable`` mode is skipped unless named with ``--mode`` (the machine cannot
run it, e.g. reduce-overhead on a CPU).

--numerics fails a checked mode whose output fails against eager or against the float64 reference.

--coverage fails a mode that executed a GEMM-class op no kernel was attributed to (or whose coverage was not
derived); it checks eager too, unless --mode names the modes.

--advice (a run profiled with --advise) fails a checked mode for which a setting was proven by a run to fuse a
GEMM group's epilogue and to make the whole model faster beyond noise (the whole 95% interval of the ratio above
1): the model does not use it. The modes --advise added are candidates, not the model's: they are checked only
when --mode names them.

Latency rules are noise-aware, like the report: --max-slowdown is violated only when the whole 95%
interval of (mode / eager) lies above the limit, --min-speedup only when the whole interval of (eager / mode)
lies below it; without samples the point ratio decides. A gate must not flap on timing noise.

Each rank of a torchrun mode is checked too (``check_ranks``). On an upgrade-check directory --max-regression
checks the before/after comparison (``check_upgrade``) and the other rules check DIR/after. What each violation
says is a Note; report/check.py prints the outcome and report/words.py says the Notes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelscope import fmt
from kernelscope.analysis.advice import ADVICE_MODES
from kernelscope.analysis.contention import busy_host_sides, is_contended
from kernelscope.analysis.speedup import EAGER
from kernelscope.analysis.stats import latency_ratio
from kernelscope.analysis.upgrade import UpgradeComparison, load_upgrade, upgrade_dir
from kernelscope.errors import UsageError
from kernelscope.result import (
    GemmEpilogue,
    ModeResult,
    Note,
    NumericsResult,
    OutputError,
    RunResult,
    Status,
    Verdict,
    to_json,
)


@dataclass(frozen=True, slots=True)
class Rules:
    expect_fused: str | None = None  # "all" | "none" | a regular expression on epilogue op names
    max_kernels_per_iter: float | None = None
    max_slowdown: float | None = None
    min_speedup: float | None = None
    modes: tuple[str, ...] = ()
    numerics: bool = False  # --numerics: a checked mode's output must pass vs eager and vs the reference
    coverage: bool = False  # --coverage: every GEMM-class op a checked mode (eager too) executed has its kernel
    advice: bool = False  # --advice: no setting proven to fuse an epilogue and run faster is left unused

    @property
    def empty(self) -> bool:
        return (self.expect_fused is None and self.max_kernels_per_iter is None and self.max_slowdown is None
                and self.min_speedup is None and not self.numerics and not self.coverage and not self.advice)


@dataclass(frozen=True, slots=True)
class Violation:
    """One violated rule: which option, which mode (or "<mode> rank <r>"), and what broke it (report/check.py
    prints "<mode>: <what> (<rule>)")."""

    rule: str  # the option, e.g. "--max-kernels-per-iter"
    mode: str
    what: Note


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    checked_modes: tuple[str, ...]
    rules: tuple[str, ...]
    violations: tuple[Violation, ...]
    notes: tuple[Note, ...] = ()  # what was left out and why (a mode unavailable there, ranks)

    @property
    def ok(self) -> bool:
        return not self.violations


def validate(rules: Rules, result: RunResult) -> re.Pattern[str] | None:
    """Usage errors (exit 2): no rule, bad numbers, a bad pattern, a --mode the result does not have."""
    if rules.empty:
        raise UsageError(
            "no rule given",
            "pass at least one of --expect-fused, --max-kernels-per-iter, --max-slowdown, --min-speedup, "
            "--numerics, --coverage, --advice",
        )
    if rules.advice and ADVICE_MODES not in result.settings:
        raise UsageError("--advice: the result holds no fusion advice",
                         "profile with --advise, or run `kernelscope advise RESULT_DIR` first")
    for opt, v in (("--max-kernels-per-iter", rules.max_kernels_per_iter), ("--max-slowdown", rules.max_slowdown),
                   ("--min-speedup", rules.min_speedup)):
        if v is not None and not v > 0:
            raise UsageError(f"{opt} must be positive (got {v})", f"e.g. {opt} 1.5")
    names = [m.name for m in result.modes]
    for name in rules.modes:
        if name not in names:
            raise UsageError(f"--mode {name}: the result has no such mode", f"modes in this result: {', '.join(names)}")
    if rules.expect_fused is None or rules.expect_fused in ("all", "none"):
        return None
    try:
        return re.compile(rules.expect_fused)
    except re.error as exc:
        raise UsageError(f"--expect-fused {rules.expect_fused!r} is not a valid regular expression: {exc}",
                         "pass all, none, or a pattern matching epilogue op names, e.g. 'gelu|relu'") from exc


def _fusion(mode: ModeResult, expect: str, pattern: re.Pattern[str] | None) -> list[Violation]:
    rule = "--expect-fused"
    out: list[Violation] = []

    def v(g: GemmEpilogue, code: str, **args: Any) -> None:
        gemm = f"{g.id} ({g.op or 'gemm'} {fmt.shape(g.m, g.n, g.k, g.batch)}, {g.backend})"
        out.append(Violation(rule, mode.name, Note(code, {"gemm": gemm, **args})))

    if not mode.gemms and (mode.kernels_by_category or {}).get("gemm", 0) > 0:
        # GEMM-class kernels ran but no verdict came out: "all fused" must not pass on an empty list
        out.append(Violation(rule, mode.name, Note("no-gemm-verdict", {"kernels": mode.kernels_by_category["gemm"]})))
        return out
    if expect == "all":
        for g in mode.gemms:
            if g.verdict not in (Verdict.FUSED.value, Verdict.NONE.value):
                v(g, "expected-fused", verdict=g.verdict, unfused=list(g.unfused))
    elif expect == "none":
        for g in mode.gemms:
            if g.fused:
                v(g, "expected-no-fusion", fused=list(g.fused))
    else:
        assert pattern is not None
        matched = False
        for g in mode.gemms:
            ops = [op for op in g.epilogue or (*g.fused, *g.unfused) if pattern.search(op)]
            matched = matched or bool(ops)
            missing = [op for op in ops if op not in g.fused]
            if missing:
                v(g, "does-not-fuse", missing=missing, fused=list(g.fused))
        if not matched:
            # A pattern that matches nothing would pass forever: a typo or a changed model must not look green.
            out.append(Violation(rule, mode.name, Note("pattern-matches-nothing", {"pattern": pattern.pattern})))
    return out


def check_result(result: RunResult, rules: Rules) -> CheckOutcome:
    pattern = validate(rules, result)
    explicit = bool(rules.modes)
    candidates = set(result.settings.get(ADVICE_MODES) or ())
    selected = [result.mode(n) for n in rules.modes] if explicit else [
        m for m in result.modes if m.name != EAGER and m.name not in candidates]
    # --coverage is about what the analysis saw, in every mode: eager is checked too unless --mode names the modes
    coverage_only = [m for m in result.modes if m.name == EAGER] if rules.coverage and not explicit else []
    eager = result.mode(EAGER)
    violations: list[Violation] = []
    notes: list[Note] = []
    checked: list[str] = []
    active = [opt for opt, v in (("--expect-fused", rules.expect_fused),
                                 ("--max-kernels-per-iter", rules.max_kernels_per_iter),
                                 ("--max-slowdown", rules.max_slowdown), ("--min-speedup", rules.min_speedup),
                                 ("--numerics", True if rules.numerics else None),
                                 ("--coverage", True if rules.coverage else None),
                                 ("--advice", True if rules.advice else None))
              if v is not None]
    for eager_mode in coverage_only:
        checked.append(eager_mode.name)
        violations += _coverage(eager_mode)
    if not selected and not coverage_only:
        violations.append(Violation("--mode", "-", Note("no-compiled-mode")))
    for mode in selected:
        assert mode is not None
        if mode.status == Status.UNAVAILABLE.value and not explicit:
            notes.append(Note("unavailable-skipped", {"mode": mode.name, "error": mode.error}))
            continue
        checked.append(mode.name)
        if mode.status != Status.OK.value:
            violations.append(Violation(", ".join(active), mode.name, _status(mode)))
            continue
        if rules.expect_fused is not None:
            violations += _fusion(mode, rules.expect_fused, pattern)
        if rules.max_kernels_per_iter is not None:
            k = mode.kernels_per_iter
            if k is None:
                violations.append(Violation("--max-kernels-per-iter", mode.name, Note("kernels-not-measured")))
            elif k > rules.max_kernels_per_iter:
                violations.append(Violation("--max-kernels-per-iter", mode.name, Note(
                    "too-many-kernels", {"kernels": k, "limit": rules.max_kernels_per_iter})))
        if rules.numerics:
            violations += _numerics(mode)
        if rules.coverage:
            violations += _coverage(mode)
        if rules.advice:
            violations += _advice(result, mode)
        for opt, limit in (("--max-slowdown", rules.max_slowdown), ("--min-speedup", rules.min_speedup)):
            if limit is None:
                continue
            violation = _latency_rule(opt, limit, mode, eager)
            if violation:
                violations.append(violation)
        if mode.ranks:  # torchrun: every rank, and the latency rules on the slowest one
            violations += check_ranks(mode, max_kernels_per_iter=rules.max_kernels_per_iter,
                                      expect_fused=rules.expect_fused)
            if len(mode.ranks) > 1 and (rules.max_slowdown is not None or rules.min_speedup is not None):
                notes.append(Note("latency-of-slowest-rank", {"mode": mode.name, "ranks": len(mode.ranks),
                                                              "slowest": mode.slowest_rank}))
    return CheckOutcome(tuple(checked), tuple(active), tuple(violations), tuple(notes))


def _status(mode: ModeResult) -> Note:
    """A mode that did not run: its status and the last line of its error (where Python puts the exception)."""
    lines = (mode.error or "").strip().splitlines()
    return Note("did-not-run-checked", {"status": mode.status, "error": lines[-1] if lines else ""})


def _numerics(mode: ModeResult) -> list[Violation]:
    """--numerics: the mode's output against eager (every element within the dtype's tolerance, no new NaN/Inf)
    and against the high-precision reference (analysis/numerics.py's rules). Both are checked: a compiled mode that
    differs from eager but is closer to the reference is reported as such, and still violates (a gate that
    wants it to pass can check eager-only modes). Not measured at all is a violation too: a gate must not pass
    on a missing check."""
    n = mode.numerics or NumericsResult()
    ve, vr = n.vs_eager or OutputError(), n.vs_reference or OutputError()
    ref = {"reference": n.reference.dtype} if n.reference is not None and n.reference.dtype else {}
    out = []
    if mode.name != EAGER and ve.passed is False:
        out.append(Violation("--numerics", mode.name, Note("fails-vs-eager", {"reason": ve.reason,
                                                                              "closer": vr.passed is True, **ref})))
    if vr.passed is False:
        out.append(Violation("--numerics", mode.name, Note("fails-vs-reference", {"reason": vr.reason, **ref})))
    if not out and ve.passed is None and vr.passed is None:
        skipped = n.reference.skipped if n.reference is not None else ""
        out.append(Violation("--numerics", mode.name, Note("numerics-not-measured", {"skipped": skipped})))
    return out


def _coverage(mode: ModeResult) -> list[Violation]:
    """--coverage: every GEMM-class op the mode executed was attributed to a kernel (the coverage self-check,
    analysis/gemm/coverage.py). Not derived is a violation too (a result from before it, a compiled trace without
    its output code), and so is a mode that did not run."""
    rule = "--coverage"
    if mode.status != Status.OK.value:
        return [Violation(rule, mode.name, Note("no-coverage-to-check", {"status": mode.status}))]
    c = mode.gemm_coverage
    if c is None:
        return [Violation(rule, mode.name, Note("coverage-not-derived"))]
    if c.complete:
        return []
    missing = [[u.op, u.module, to_json(u.reason)] for u in c.unattributed[:3]]
    return [Violation(rule, mode.name, Note("coverage-incomplete", {
        "attributed": c.attributed, "ops": c.ops, "missing": missing, "more": max(0, len(c.unattributed) - 3)}))]


def _advice(result: RunResult, mode: ModeResult) -> list[Violation]:
    """--advice: each GEMM group of the mode whose best candidate fused its epilogue and made the whole model faster
    beyond noise (Advice.best: the interval of the ratio wholly above 1)."""
    out = []
    for a in result.advice:
        best = next((c for c in a.candidates if c.mode_name == a.best), None) if a.mode == mode.name else None
        if best is not None and best.low is not None and best.low > 1.0:
            out.append(Violation("--advice", mode.name, Note("unused-setting-fuses-faster", {
                "group": a.group, "candidate": best.mode_name, "ops": [*best.fused, *best.elsewhere],
                "ratio": best.latency_ratio, "low": best.low, "high": best.high, "options": best.options})))
    return out


_INTERVAL = ("bootstrap", "processes")  # Ratio methods that carry a 95% interval (analysis/stats.py)


def _latency_rule(opt: str, limit: float, mode: ModeResult, eager: ModeResult | None) -> Violation | None:
    if mode.name == EAGER:
        return None  # eager against itself: always 1.0
    if eager is None or eager.status != Status.OK.value or eager.latency_ms is None:
        return Violation(opt, mode.name, Note("no-eager-latency"))
    if mode.latency_ms is None:
        return Violation(opt, mode.name, Note("latency-not-measured"))
    slowdown = latency_ratio(mode.latency_ms, eager.latency_ms)  # mode / eager
    assert slowdown.value is not None
    # a timing the machine's load distorted still fails the gate (it cannot vouch for the code), and says why:
    # the modes timed on a busy machine, and the one timed on a busy host with the one on a quiet host
    hosts = busy_host_sides(((mode.name, mode.latency_ms), (eager.name, eager.latency_ms)))
    load = {"mode_ms": mode.latency_ms.median, "eager_ms": eager.latency_ms.median, "limit": limit,
            "busy": [m.name for m in (mode, eager) if is_contended(m.latency_ms)],
            "host": [hosts[0], eager.name if hosts[0] == mode.name else mode.name] if hosts else []}
    if opt == "--max-slowdown":
        worst_case_good = slowdown.low if slowdown.method in _INTERVAL else slowdown.value
        assert worst_case_good is not None
        if worst_case_good > limit:
            interval = slowdown.method in _INTERVAL
            return Violation(opt, mode.name, Note("slower-than-allowed", {
                "ratio": slowdown.value, "low": slowdown.low if interval else None,
                "high": slowdown.high if interval else None, **load}))
        return None
    speedup = slowdown.inverted()
    best_case = speedup.high if speedup.method in _INTERVAL else speedup.value
    assert best_case is not None and speedup.value is not None
    if best_case < limit:
        interval = speedup.method in _INTERVAL
        return Violation(opt, mode.name, Note("speedup-below", {
            "speedup": speedup.value, "low": speedup.low if interval else None,
            "high": speedup.high if interval else None, **load}))
    return None


def check_ranks(mode: ModeResult, *, max_kernels_per_iter: float | None,
                expect_fused: str | None) -> list[Violation]:
    """``check`` on every rank, not only the headline (slowest) one: kernels per iteration, and ``--expect-fused
    all|none`` on each rank's GEMM verdicts. The latency rules use the mode's figures, the slowest rank's."""
    out = []
    for r in mode.ranks:
        if r.rank == mode.slowest_rank or r.status != "ok":
            continue  # the headline rank is the mode itself; a failed rank fails the mode
        who = f"{mode.name} rank {r.rank}"
        if max_kernels_per_iter is not None and r.kernels_per_iter is not None and \
                r.kernels_per_iter > max_kernels_per_iter:
            out.append(Violation("--max-kernels-per-iter", who, Note(
                "too-many-kernels", {"kernels": r.kernels_per_iter, "limit": max_kernels_per_iter})))
        want = (expect_fused or "").lower()
        if want in ("all", "none"):
            for v in r.verdicts:
                label, _, verdict = v.rpartition(": ")
                if (want == "all" and verdict not in ("fused", "none")) or (
                        want == "none" and verdict in ("fused", "partial")):
                    out.append(Violation("--expect-fused", who, Note("rank-gemm-verdict", {"gemm": label,
                                                                                           "verdict": verdict})))
    return out


# ------------------------------------------------------------------------------------------ upgrade-check DIR
def check_upgrade(cmp: UpgradeComparison, max_regression: float, modes: Sequence[str] = ()) -> CheckOutcome:
    """``check --max-regression X`` on an upgrade-check directory: each checked mode (``modes``, default all)
    violates it on a new failure, numerics that fail after but not before, an epilogue op no longer fused, or a
    latency after/before whose whole 95% interval lies above X (the point ratio without samples)."""
    rule = "--max-regression"
    if not max_regression > 0:
        raise UsageError(f"{rule} must be positive (got {max_regression})", f"e.g. {rule} 1.05")
    names = [m.name for m in cmp.modes]
    for name in modes:
        if name not in names:
            raise UsageError(f"--mode {name}: the comparison has no such mode", f"modes in it: {', '.join(names)}")
    violations: list[Violation] = []
    checked = []
    for m in cmp.modes:
        if modes and m.name not in modes:
            continue
        checked.append(m.name)
        if m.status_change == "new failure":
            assert m.after is not None
            violations.append(Violation(rule, m.name, Note("new-failure", {
                "status": m.after.status, "error": fmt.first_line(m.after.error)})))
            continue
        if m.numerics_regressed:
            assert m.numerics_after is not None
            violations.append(Violation(rule, m.name, Note("numerics-fail-after", {
                "reason": to_json(m.numerics_after.reason)})))
        for g in m.gemms:
            if g.lost:
                violations.append(Violation(rule, m.name, Note("no-longer-fuses", {
                    "gemm": g.label, "lost": list(g.lost), "backend": g.after.backend if g.after else "?"})))
        # torchrun runs: a rank that fused less after the upgrade (the mode's own GEMM rows are its slowest rank's)
        violations += [Violation(rule, f"{m.name} rank {rank}", Note("rank-fused-less", {"change": line}))
                       for rank, line in m.rank_fusion_lost]
        r = m.latency
        if r.value is not None:
            best = r.low if r.method == "bootstrap" else r.value
            if best is not None and best > max_regression:
                interval = r.method == "bootstrap"
                # still a violation when load distorted a side's timing (the gate cannot vouch for the code), and
                # says which side: "before" / "after" timed on a busy machine, on a busy host beside a quiet one
                violations.append(Violation(rule, m.name, Note("slower-after-upgrade", {
                    "ratio": r.value, "low": r.low if interval else None, "high": r.high if interval else None,
                    "limit": max_regression, "busy": list(m.contended), "host": list(m.busy_host)})))
    return CheckOutcome(tuple(checked), (rule,), tuple(violations))


def check_upgrade_dir(path: str | Path, rules: Rules, max_regression: float | None) -> CheckOutcome | None:
    """`kernelscope check DIR` on an upgrade-check directory: the result rules (--expect-fused, ...) on DIR/after,
    --max-regression on the comparison. None when DIR is not an upgrade-check directory."""
    from kernelscope.result_file import load_result

    top = upgrade_dir(path)
    if top is None:
        return None
    if rules.empty and max_regression is None:
        raise UsageError("no rule given", "pass --max-regression X (after vs before) and/or the rules for the after "
                                          "run: --expect-fused, --max-kernels-per-iter, --max-slowdown, --min-speedup")
    parts = []
    if not rules.empty:
        parts.append(check_result(load_result(top / "after"), rules))
    if max_regression is not None:
        parts.append(check_upgrade(load_upgrade(top), max_regression, rules.modes))
    return CheckOutcome(tuple(dict.fromkeys(n for o in parts for n in o.checked_modes)),
                        tuple(r for o in parts for r in o.rules), tuple(v for o in parts for v in o.violations),
                        tuple(n for o in parts for n in o.notes))
