"""What a report shows, laid out once from a RunResult: the one place html, Markdown and the terminal read.

Everything here is a read of the result plus presentation: the speedup vs eager, the numerics verdicts, the
fallback advice for failed modes and the failures grouped (all decided by analysis, analysis/facts.py, and stored
in the result), the top kernels, the rows of each table. What analysis said as Notes is put in words by
report/words.py. No facts are derived here; tests assert on these objects rather than on HTML.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelscope import fmt
from kernelscope.analysis.speedup import EAGER
from kernelscope.fmt import KV, environment_rows, flatten
from kernelscope.report import charts
from kernelscope.report.evidence_words import EvidenceLine, evidence_line, why_not_text
from kernelscope.report.ranks import ranks_views
from kernelscope.report.words import (
    ADVICE_SETTINGS,
    ADVICE_VERDICTS,
    DYNAMIC_NOTE,
    SKIPPED,
    advice_cause,
    compile_line,
    note_from,
    recommendation_text,
    say,
    say_all,
    speedup_interval_text,
    speedup_text,
)
from kernelscope.result import (
    Advice,
    AdviceCandidate,
    AutotuneResult,
    DynamicSummary,
    DynamoStats,
    FailureGroup,
    GemmCoverage,
    GemmEpilogue,
    GemmGroup,
    GemmOp,
    KernelStat,
    MemoryPeaks,
    ModeResult,
    Note,
    NumericsResult,
    NumericsVerdict,
    OutputError,
    OutputNumerics,
    OutputVerdict,
    Recommendation,
    ReferenceInfo,
    RunResult,
    Speedup,
    Status,
    SweepPoint,
)
from kernelscope.tolerance import DEFAULT_TOLERANCE_DTYPE, TOLERANCES, Tolerance

TOP_KERNELS = 40  # rows per mode in the HTML kernel table; the rest are summed in one line
# Groups of GEMMs per mode in the HTML table: every GEMM is in one group, so a model of identical layers has a
# handful (a 1B Llama: 7 per mode, 8 with a layer that differs); only GEMMs without module paths in many
# distinct shapes reach this.
GROUP_ROWS = 200


# ---------------------------------------------------------------------------------------------------------------
# What analysis decided, as the tables print it.
@dataclass(frozen=True, slots=True)
class SpeedupView:
    """A mode's speedup vs eager (``ModeResult.speedup``) with its words: "1.12× faster", "2.49–2.54× slower"."""

    speedup: Speedup

    @property
    def value(self) -> float | None:
        return self.speedup.value

    @property
    def low(self) -> float | None:
        return self.speedup.low

    @property
    def high(self) -> float | None:
        return self.speedup.high

    @property
    def method(self) -> str:
        return self.speedup.method

    @property
    def call(self) -> str:
        return self.speedup.call

    @property
    def noisy(self) -> bool:
        return self.speedup.noisy

    @property
    def text(self) -> str:
        return speedup_text(self.speedup)

    @property
    def interval_text(self) -> str:
        return speedup_interval_text(self.speedup)


def speedup_view(m: ModeResult) -> SpeedupView:
    return SpeedupView(m.speedup or Speedup())


@dataclass(frozen=True, slots=True)
class NumericsCall:
    """A mode's numerics verdict (``ModeResult.numerics_verdict``) with its reason and hint in words."""

    verdict: NumericsVerdict

    @property
    def status(self) -> str:
        return self.verdict.status

    @property
    def vs_eager(self) -> bool | None:
        return self.verdict.vs_eager

    @property
    def vs_reference(self) -> bool | None:
        return self.verdict.vs_reference

    @property
    def nonfinite(self) -> int:
        return self.verdict.nonfinite

    @property
    def reason(self) -> str:
        return say(self.verdict.reason)

    @property
    def hint(self) -> str:
        return say(self.verdict.hint) if self.verdict.hint is not None else ""


def numerics_call(m: ModeResult) -> NumericsCall:
    return NumericsCall(m.numerics_verdict or NumericsVerdict("n/a", reason=Note("not-measured")))


# ---------------------------------------------------------------------------------------------------------------
# Rows and sections.
@dataclass(frozen=True, slots=True)
class ModeRow:
    mode: ModeResult
    speedup: SpeedupView
    numerics: NumericsCall  # the one call, also this mode's NumericsRow.call

    @property
    def name(self) -> str:
        return self.mode.name

    @property
    def ok(self) -> bool:
        return self.mode.status == Status.OK.value

    @property
    def memory_kind(self) -> str:
        """What "peak memory" measures when it is not CUDA's allocated bytes."""
        mem = self.mode.memory
        if mem is None:
            return ""
        if mem.peak_rss_growth_bytes is not None:
            return "RSS growth"
        if mem.peak_rss_bytes is not None:
            return "RSS, whole process"
        return ""

    @property
    def gemms_fused(self) -> str:
        """"1/4": GEMMs whose epilogue is fully fused, of those that have an epilogue; "" without GEMMs."""
        gemms = self.mode.gemms
        if not gemms:
            return ""
        with_epilogue = [g for g in gemms if g.verdict != "none"]
        if not with_epilogue:
            return "no epilogue"
        return f"{sum(g.verdict == 'fused' for g in with_epilogue)}/{len(with_epilogue)}"


@dataclass(frozen=True, slots=True)
class KernelTable:
    top: tuple[KernelStat, ...]
    hidden_count: int
    hidden_time_us: float
    memops: tuple[KernelStat, ...]


def kernel_table(kernels: Iterable[KernelStat], limit: int = TOP_KERNELS) -> KernelTable:
    compute = sorted((k for k in kernels if not k.is_memop), key=lambda k: (-k.time_us_per_iter, k.name))
    memops = tuple(k for k in kernels if k.is_memop)
    hidden = compute[limit:]
    return KernelTable(tuple(compute[:limit]), len(hidden), sum(k.time_us_per_iter for k in hidden), memops)


@dataclass(frozen=True, slots=True)
class RecommendationRow:
    """Which mode to use at one shape (``RunResult.recommendation``), with why in words."""

    recommendation: Recommendation

    @property
    def label(self) -> str:
        return self.recommendation.label

    @property
    def mode(self) -> str | None:
        return self.recommendation.mode

    @property
    def confidence(self) -> str:
        return self.recommendation.confidence

    @property
    def reason(self) -> str:
        return recommendation_text(self.recommendation)


@dataclass(frozen=True, slots=True)
class Failure:
    mode: ModeResult
    recommendation: str  # ModeResult.fallback in words


@dataclass(frozen=True, slots=True)
class FailureRow:
    """Modes that failed the same way (``RunResult.failure_groups``), as the reports print them."""

    group: FailureGroup

    @property
    def modes(self) -> tuple[str, ...]:
        return self.group.modes

    @property
    def status(self) -> str:
        return self.group.status

    @property
    def error_kind(self) -> str:
        return self.group.error_kind

    @property
    def error(self) -> str:
        return self.group.error

    @property
    def log(self) -> str | None:
        return self.group.log

    @property
    def line(self) -> str:
        return SKIPPED if self.group.error_kind == "skipped" else self.group.line

    @property
    def recommendation(self) -> str:
        return say_all(self.group.advice)


@dataclass(frozen=True, slots=True)
class KernelRef:
    """A kernel name as tables show it (short) and as it is (full: on hover and in the expanded row)."""

    short: str
    full: str

    @property
    def cut(self) -> bool:
        return self.short != self.full


def kernel_ref(name: str, limit: int = 60) -> KernelRef:
    return KernelRef(fmt.kernel_name(name, limit), name)


@dataclass(frozen=True, slots=True)
class GemmRow:
    """One GEMM as the report shows it: the verdict, short kernel names, and the detail for the expanded row."""

    gemm: GemmEpilogue
    kernels: tuple[KernelRef, ...]
    unfused_kernels: tuple[KernelRef, ...]
    roofline: str
    autotune: AutotuneResult | None
    costs: tuple[str, ...]  # "gelu: 3.21 µs per iteration in triton_poi_fused_gelu_0"

    @property
    def evidence(self) -> tuple[EvidenceLine, ...]:
        """The GEMM's evidence in words (report/evidence_words.py)."""
        return tuple(evidence_line(e) for e in self.gemm.evidence)

    @property
    def why_not(self) -> str:
        """The GEMM's why-not in words."""
        return why_not_text(self.gemm.why_not)

    @property
    def has_detail(self) -> bool:
        g = self.gemm
        return bool(g.why_not or g.evidence or self.autotune or self.roofline or g.epilogue or g.prologue
                    or self.costs or g.source or any(k.cut for k in (*self.kernels, *self.unfused_kernels)))


def gemm_row(g: GemmEpilogue, autotune: AutotuneResult | None) -> GemmRow:
    costs = tuple(
        f"{c.op}: {fmt.us(c.time_us_per_iter)} per iteration"
        + (f", {fmt.nbytes(c.bytes_per_iter)} through memory" if c.bytes_per_iter else "")
        + (f" in {', '.join(fmt.kernel_name(k) for k in c.kernels)}" if c.kernels else "")
        for c in g.costs)
    return GemmRow(g, tuple(kernel_ref(k) for k in g.kernels), tuple(kernel_ref(k) for k in g.unfused_kernels),
                   roofline_line(g), autotune, costs)


def epilogue_cost_line(m: ModeResult) -> str:
    """"unfused epilogues: 18% of GPU time, 9 of 24 kernels" (CPU: of CPU-kernel time), or "" when unknown."""
    c = m.epilogue_cost
    if c is None:
        return ""
    where = "GPU time" if m.device != "cpu" else "CPU-kernel time"
    share = f"{c.pct_time:.0f}% of {where}" if c.pct_time is not None else f"{fmt.us(c.time_us_per_iter)} per iteration"
    kernels = f"{c.kernels} of {fmt.count(c.of_kernels)} kernels" if c.of_kernels else f"{c.kernels} kernels"
    extra = f", {fmt.nbytes(c.bytes_per_iter)} per iteration through memory" if c.bytes_per_iter else ""
    return f"unfused epilogues: {share}, {kernels}{extra}"


@dataclass(frozen=True, slots=True)
class GroupRow:
    """One group of identical layers (analysis/gemm/summary.py) as the reports show it: one row, and its
    members' rows (launch order) for the per-GEMM detail (the terminal's --verbose, report.html's collapsed
    list)."""

    group: GemmGroup
    members: tuple[GemmRow, ...]
    # Evidence every member has word for word (the rule that ran, "same kernels in all iterations"): shown once
    # for the group, so a 16-layer model does not print it 16 times; each member lists the rest.
    shared_evidence: tuple[EvidenceLine, ...] = ()

    @property
    def first(self) -> GemmEpilogue:
        return self.members[0].gemm

    @property
    def count(self) -> int:
        return len(self.members)

    @property
    def label(self) -> str:
        """The group's layers ("layers.0-15.mlp.up_proj"); "" for GEMMs without a module path (their op and
        shape say which)."""
        return self.group.label if self.first.module else ""

    @property
    def shared_kernels(self) -> bool:
        """Every member ran the same GEMM kernels and put its unfused ops in the same kernels (shown once)."""
        first = self.first
        return all((m.gemm.kernels, m.gemm.unfused_kernels) == (first.kernels, first.unfused_kernels)
                   for m in self.members)

    @property
    def shared_autotune(self) -> AutotuneResult | None:
        """The autotune table that decided every member (identical layers share one), else None."""
        first = self.members[0].autotune
        return first if all(m.autotune is first for m in self.members) else None

    @property
    def shared_costs(self) -> bool:
        return all(m.costs == self.members[0].costs for m in self.members)

    def own_evidence(self, row: GemmRow) -> tuple[EvidenceLine, ...]:
        """A member's evidence less what every member has (shown once, for the group)."""
        return tuple(e for e in row.evidence if e not in self.shared_evidence)

    @property
    def shared_epilogue(self) -> bool:
        first = self.first
        return all((m.gemm.epilogue, m.gemm.prologue) == (first.epilogue, first.prologue) for m in self.members)

    @property
    def unfused_kernels(self) -> tuple[str, ...]:
        """Where the unfused ops ran: the members' kernels when they all ran in the same ones, else the first
        member's followed by "…"."""
        first = self.first.unfused_kernels
        same = all(m.gemm.unfused_kernels == first for m in self.members)
        return first if same or not first else (*first, fmt.ELLIPSIS)

    @property
    def why_not(self) -> str:
        """The members' why-not once: theirs when they all say the same, else the first member's, so marked."""
        first = self.members[0].why_not
        if not first or all(m.why_not == first for m in self.members):
            return first
        return f"{first} (said of {self.first.module or self.first.id}; the others' differ in detail)"

    @property
    def differs(self) -> str:
        """"differs from layers.{0-6,8-15}.mlp.up_proj: verdict fused (theirs: unfused)", or ""."""
        g = self.group
        if not g.differs_from:
            return ""
        return f"differs from {g.differs_from}" + (f": {g.difference}" if g.difference else "")

    def line(self, name_limit: int = 60) -> str:
        """The terminal's row: one GEMM's line for a group of one, else the group's ("mm
        layers.0-15.mlp.up_proj ×16, 512 × 2816 × 1024 cuBLASLt: unfused (unfused mul in ...)")."""
        if self.count == 1:
            return gemm_line(self.first, name_limit)
        return gemm_line(self.first, name_limit, label=self.label, count=self.count,
                         unfused_kernels=self.unfused_kernels)


def group_rows(m: ModeResult, rows: Sequence[GemmRow]) -> tuple[GroupRow, ...]:
    """The mode's GEMMs by group (every GEMM in one; analysis/gemm/summary.py groups them)."""
    by_id = {r.gemm.id: r for r in rows}
    out = []
    for grp in m.gemm_groups:
        members = tuple(by_id[i] for i in grp.members if i in by_id)
        if not members:
            continue
        shared: tuple[EvidenceLine, ...] = ()
        if len(members) > 1:
            rest = [set(r.evidence) for r in members[1:]]
            shared = tuple(e for e in members[0].evidence if all(e in s for s in rest))
        out.append(GroupRow(grp, members, shared))
    return tuple(out)


MISSING_SHOWN = 20  # unattributed GEMM-class ops listed per mode (result.json has them all)


def coverage_line(c: GemmCoverage) -> str:
    """"54 of 54 GEMM-class ops attributed to a kernel (7 convolution by the CPU op that launched the kernel ...)"."""
    extra = []
    if c.via_launching_op:
        extra.append(", ".join(f"{n} {kind}" for kind, n in c.via_launching_op.items())
                     + " by the CPU op that launched the kernel (its name does not say GEMM)")
    if c.decomposed:
        extra.append(", ".join(f"{n} from decomposing {op}" for op, n in c.decomposed.items()))
    if c.by_name_only:
        extra.append(f"{c.by_name_only} more GEMM kernel(s) that no GEMM-class op launched, read from their names")
    if c.oracle is not None:  # the independent count: said in full only where it disagrees
        extra.append(f"{c.oracle} counted by the oracle from {c.oracle_source}, {c.missing} of them not found"
                     if c.missing or c.oracle != c.ops else f"{c.oracle_source} agrees")
    return (f"{c.attributed} of {c.ops} GEMM-class ops attributed to a kernel"
            + (f" ({'; '.join(extra)})" if extra else ""))


def unattributed_line(u: GemmOp) -> str:
    """"aten::cudnn_convolution layer1.0.conv1 25088×64×64 (model.py:12): launched no kernel in the trace"."""
    where = f" ({u.source})" if u.source else ""
    module = f" {u.module}" if u.module else ""
    shape = fmt.shape(u.m, u.n, u.k, u.batch)
    shape = f" {shape}" if shape != fmt.DASH else ""
    return f"{u.op}{module}{shape}{where}: {say(u.reason) if u.reason is not None else 'not attributed'}"


@dataclass(frozen=True, slots=True)
class CoverageRow:
    """One mode's coverage self-check as the reports print it; ``warning``: the GEMM count disagrees with eager's
    beyond what decomposition explains."""

    mode: str
    line: str
    complete: bool
    missing: tuple[str, ...]
    hidden: int
    vs_eager: str
    warning: bool


def coverage_row(m: ModeResult) -> CoverageRow | None:
    c = m.gemm_coverage
    if c is None or (not c.ops and not c.by_name_only):
        return None
    missing = tuple(unattributed_line(u) for u in c.unattributed[:MISSING_SHOWN])
    return CoverageRow(m.name, coverage_line(c), c.complete, missing, max(0, len(c.unattributed) - MISSING_SHOWN),
                       say(c.vs_eager) if c.vs_eager is not None else "", c.vs_eager_explained is False)



@dataclass(frozen=True, slots=True)
class ModeSection:
    row: ModeRow
    kernels: KernelTable
    gemms: tuple[GemmEpilogue, ...]
    groups: tuple[GroupRow, ...] = ()
    index: int = 0  # the section's place in the report (ids of its elements)

    @property
    def shown_groups(self) -> tuple[GroupRow, ...]:
        """The groups report.html lists: the first GROUP_ROWS (a model without module paths and many distinct
        shapes); result.json has them all."""
        return self.groups[:GROUP_ROWS]

    @property
    def hidden_groups(self) -> tuple[int, int]:
        """(groups, GEMMs) past GROUP_ROWS."""
        rest = self.groups[GROUP_ROWS:]
        return len(rest), sum(g.count for g in rest)

    @property
    def epilogue_cost(self) -> str:
        return epilogue_cost_line(self.row.mode)

    @property
    def show_module(self) -> bool:
        return any(g.module or g.source for g in self.gemms)

    def autotune_anchor(self, table: AutotuneResult) -> str:
        """The id of a table in report.html: each table is shown once per mode, its GEMMs link to it."""
        index = next((i for i, a in enumerate(self.row.mode.autotune) if a is table), 0)
        return f"autotune-{self.index}-{index}"

    @property
    def autotune_tables(self) -> tuple[AutotuneResult, ...]:
        """The tables some GEMM of the mode links to, once each, in the mode's order."""
        used = {id(m.autotune) for grp in self.groups for m in grp.members if m.autotune is not None}
        return tuple(a for a in self.row.mode.autotune if id(a) in used)

    @property
    def unmatched_autotune(self) -> tuple[AutotuneResult, ...]:
        return tuple(a for a in self.row.mode.autotune if a.gemm is None)


def gemm_autotune(m: ModeResult, g: GemmEpilogue) -> AutotuneResult | None:
    """The max-autotune table that decided GEMM ``g`` (``ModeResult.gemm_autotune``), or None."""
    i = m.gemm_autotune.get(g.id)
    return m.autotune[i] if i is not None and 0 <= i < len(m.autotune) else None


def mode_section(row: ModeRow, index: int = 0) -> ModeSection:
    m = row.mode
    rows = tuple(gemm_row(g, gemm_autotune(m, g)) for g in m.gemms)
    return ModeSection(row, kernel_table(m.kernels), m.gemms, group_rows(m, rows), index)


# ---------------------------------------------------------------------------------------------------------------
# Fusion advice (--advise): one row per (mode, GEMM group) not all fused, its candidates under it.
@dataclass(frozen=True, slots=True)
class AdviceCandidateRow:
    c: AdviceCandidate
    best: bool

    @property
    def verdict(self) -> str:
        return ADVICE_VERDICTS.get(self.c.verdict, self.c.verdict)

    @property
    def setting(self) -> str:
        return ADVICE_SETTINGS.get(self.c.setting, self.c.setting)

    @property
    def ops(self) -> str:
        """"fused bias, gelu" / "silu, mul in a kernel that reads the result" / "mul still unfused"."""
        parts = []
        if self.c.fused:
            parts.append("fused " + ", ".join(self.c.fused))
        if self.c.elsewhere:
            parts.append(", ".join(self.c.elsewhere) + " in a kernel that reads the result anyway")
        if self.c.unfused:
            parts.append(", ".join(self.c.unfused) + " still unfused")
        return "; ".join(parts) or fmt.DASH

    @property
    def ran(self) -> bool:
        return self.c.verdict not in ("not-run", "failed")

    @property
    def ratio(self) -> str:
        """The whole model against the mode it improves: "1.21× faster (95% CI 1.10–1.33× faster)"."""
        if self.c.latency_ratio is None:
            return fmt.DASH
        ci = fmt.speedup_interval(self.c.low, self.c.high)
        between = ", between two runs" if self.c.between_runs else ""
        return fmt.speedup(self.c.latency_ratio) + (f" (95% CI {ci}{between})" if ci else "")

    @property
    def compile(self) -> str:
        return fmt.first_call(self.c.compile_s)

    @property
    def numerics(self) -> str:
        return {True: "pass", False: "fail"}.get(self.c.numerics_pass, "n/a")  # type: ignore[arg-type]

    @property
    def why(self) -> str:
        return say(self.c.why) if self.c.why is not None else ""

    @property
    def line(self) -> str:
        return compile_line(self.c.options)


@dataclass(frozen=True, slots=True)
class AdviceRow:
    a: Advice
    candidates: tuple[AdviceCandidateRow, ...]

    @property
    def cause(self) -> str:
        return advice_cause(self.a.cause)

    @property
    def no_setting(self) -> str:
        return say(self.a.no_setting) if self.a.no_setting is not None else ""

    @property
    def best(self) -> AdviceCandidateRow | None:
        return next((c for c in self.candidates if c.best), None)

    @property
    def cost(self) -> str:
        """"6.8% of kernel time" (or its µs when the share is not known)."""
        if self.a.share_pct is not None:
            return f"{self.a.share_pct:.1f}% of kernel time"
        return fmt.us(self.a.cost_us) if self.a.cost_us is not None else ""

    @property
    def line(self) -> str:
        """"fc (default): bias, gelu unfused (max-autotune off: a library GEMM ran)"."""
        return f"{self.a.group} ({self.a.mode}): {', '.join(self.a.unfused)} unfused ({self.cause})"


def advice_rows(result: RunResult) -> tuple[AdviceRow, ...]:
    """The advice in the order analysis wrote it (mode by mode, groups in launch order)."""
    return tuple(AdviceRow(a, tuple(AdviceCandidateRow(c, c.mode_name == a.best) for c in a.candidates))
                 for a in result.advice)


@dataclass(frozen=True, slots=True)
class ReportContext:
    result: RunResult
    rows: tuple[ModeRow, ...]
    sections: tuple[ModeSection, ...]
    failures: tuple[Failure, ...]
    environment: tuple[KV, ...]
    settings: tuple[KV, ...]
    latency_chart: charts.Chart
    kernel_chart: charts.Chart
    timeline_chart: charts.Chart
    traces: tuple[ModeResult, ...]
    tolerance: Tolerance
    tolerances: tuple[Tolerance, ...] = field(default=tuple(TOLERANCES.values()))
    # Shape sweep, dynamic vs static, recommendation, numerics vs reference, compile cache, memory.
    sweep: SweepView | None = None
    dynamic: DynamicSummary | None = None
    recommendations: tuple[RecommendationRow, ...] = ()
    numerics: tuple[NumericsRow, ...] = ()
    compile: tuple[CompileRow, ...] = ()
    memory: tuple[MemoryRow, ...] = ()
    peaks: tuple[KV, ...] = ()
    notes: tuple[KV, ...] = ()  # what each mode's worker noted (key: "mode" or "mode @ shapes")
    run_notes: tuple[str, ...] = ()  # what analysis noted of the run as a whole
    failure_groups: tuple[FailureRow, ...] = ()  # the failures once each: identical errors and skips folded
    headline: tuple[KV, ...] = ()  # device, GPU, torch, ... for the header line of every report
    ranks: tuple[Any, ...] = ()  # report/ranks.py RanksView per mode run under torchrun
    coverage: tuple[CoverageRow, ...] = ()  # the coverage self-check per mode
    advice: tuple[AdviceRow, ...] = ()  # fusion advice (--advise)

    @property
    def eager(self) -> ModeResult | None:
        return self.result.mode(EAGER)

    @property
    def dynamic_note(self) -> str:
        return DYNAMIC_NOTE

    @property
    def reference_dtype(self) -> str:
        """The dtype the numerics reference ran in, as the captions name it: "float64", "float32" where float64
        could not run the model, both joined when the modes differ; "high-precision" when none is recorded."""
        dtypes = dict.fromkeys(m.numerics.reference.dtype for m in self.result.modes
                               if m.numerics is not None and m.numerics.reference is not None
                               and m.numerics.reference.dtype)
        return " / ".join(d for d in dtypes if d) or "high-precision"


def build_context(result: RunResult) -> ReportContext:
    # One numerics call per mode, shown by the Modes table and the Numerics table alike (they cannot disagree).
    calls = {id(m): numerics_call(m) for m in result.modes}
    rows = tuple(ModeRow(m, speedup_view(m), calls[id(m)]) for m in result.modes)
    sections = tuple(mode_section(r, i) for i, r in enumerate(r for r in rows if r.mode.kernels or r.mode.gemms))
    failures = tuple(Failure(m, say_all(m.fallback)) for m in result.modes if m.status != Status.OK.value)
    return ReportContext(
        result=result,
        rows=rows,
        sections=sections,
        failures=failures,
        failure_groups=tuple(FailureRow(g) for g in result.failure_groups),
        environment=tuple(environment_rows(result.environment)),
        settings=tuple(flatten(result.settings)),
        latency_chart=charts.latency_chart(result.modes),
        kernel_chart=charts.kernel_stack_chart(result.modes),
        timeline_chart=charts.timeline_chart(result.modes),
        traces=tuple(m for m in result.modes if m.trace or m.inductor_code or m.log),
        tolerance=result.tolerance or TOLERANCES[DEFAULT_TOLERANCE_DTYPE],
        sweep=sweep_view(result),
        dynamic=result.dynamic if result.dynamic is not None and (result.points or any(
            m.dynamo is not None for m in result.modes if m.name == result.dynamic.mode)) else None,
        # A recommendation compares measured latencies: a trace analysed on its own has none to compare.
        recommendations=tuple(RecommendationRow(r) for r in result.recommendation) if any(
            m.latency_ms for p in (result.points or (result,)) for m in p.modes) else (),
        numerics=tuple(numerics_row(m, calls[id(m)]) for m in result.modes if m.numerics is not None),
        compile=tuple(compile_row(m) for m in result.modes if m.compile is not None or m.dynamo is not None),
        memory=tuple(memory_row(m) for m in result.modes if m.memory is not None),
        peaks=peak_rows(result.peaks),
        notes=mode_notes(result),
        run_notes=(*result.notes, *(say(f) for f in result.findings)),
        headline=headline(result),
        ranks=ranks_views(result),
        coverage=tuple(row for m in result.modes if (row := coverage_row(m)) is not None),
        advice=advice_rows(result),
    )




def headline(result: RunResult) -> tuple[KV, ...]:
    """Device first, then the facts a reader needs to place a run, as far as the environment recorded them. A
    CPU run claims no CUDA version (a CUDA build of torch reports one even where no GPU was used)."""
    env = result.environment
    device = result.device or env.device or ""
    cpu = device == "cpu"
    facts = (("GPU", None if cpu else env.gpu), ("compute capability", None if cpu else env.capability),
             ("CPU", env.cpu), ("torch", env.torch), ("triton", env.triton), ("CUDA", None if cpu else env.cuda),
             ("driver", None if cpu else env.driver), ("CUDA driver", None if cpu else env.cuda_driver_version))
    return (KV("device", device or "unknown"), *(KV(label, v) for label, v in facts if v))


def peak_rows(peaks: dict[str, Any] | None) -> tuple[KV, ...]:
    """The device peaks the roofline used ("datasheet / matmul_tflops / float16: 989.5"), their notes in words."""
    shown = {k: ({**v, "notes": [say(note_from(n)) for n in v["notes"]]} if isinstance(v, dict) and v.get("notes")
                 else v) for k, v in (peaks or {}).items() if v}
    return tuple(flatten(shown))


def mode_notes(result: RunResult) -> tuple[KV, ...]:
    """Every mode's notes at every shape point (a latency that kept drifting, a backend dropped, NaN/Inf, an
    environment setting kernelscope made), once per (mode, note) with the shapes it was noted at."""
    points = [(p.label, p.modes) for p in result.points] or [("", result.modes)]
    seen: dict[tuple[str, str], list[str]] = {}
    for label, modes in points:
        for m in modes:
            for note in (*m.notes, *(say(f) for f in m.findings)):
                seen.setdefault((m.name, note), []).append(label)
    out = []
    for (mode, note), labels in seen.items():
        where = ", ".join(lb for lb in labels if lb) if len(points) > 1 and len(labels) < len(points) else ""
        out.append(KV(f"{mode} @ {where}" if where else mode, note))
    return tuple(out)


# ---------------------------------------------------------------------------------------------------------------
# Shape sweep: one row per point, one cell per mode; the speedup-vs-shape chart.
@dataclass(frozen=True, slots=True)
class SweepCell:
    mode: str
    status: str
    median_ms: float | None
    speedup: SpeedupView
    kernels_per_iter: float | None
    numerics: str  # pass / fail / n/a / reference (ModeResult.numerics_verdict: the one call per mode)
    recompiles: int | None = None


@dataclass(frozen=True, slots=True)
class SweepRow:
    label: str
    params: dict[str, Any]
    cells: tuple[SweepCell, ...]
    recommendation: Recommendation | None


@dataclass(frozen=True, slots=True)
class SweepView:
    axis: str | None  # the one numeric parameter that varies (the chart's log x axis), else None
    modes: tuple[str, ...]
    rows: tuple[SweepRow, ...]
    chart: charts.Chart


def _point_cells(point: SweepPoint) -> tuple[SweepCell, ...]:
    return tuple(SweepCell(m.name, m.status, m.latency_ms.median if m.latency_ms else None, speedup_view(m),
                           m.kernels_per_iter, numerics_call(m).status,  # the call the Modes and Numerics tables show
                           m.dynamo.recompiles if m.dynamo is not None else None) for m in point.modes)


def sweep_view(result: RunResult) -> SweepView | None:
    if not result.points:
        return None
    recs = {r.label: r for r in result.recommendation}
    rows = tuple(SweepRow(p.label, p.params, _point_cells(p), recs.get(p.label)) for p in result.points)
    modes = tuple(dict.fromkeys(m.name for p in result.points for m in p.modes))
    return SweepView(result.sweep_axis, modes, rows, charts.speedup_vs_shape_chart(rows, modes, result.sweep_axis))


# ---------------------------------------------------------------------------------------------------------------
# Numerics, compile/cache and memory rows: reads of what the worker recorded.
@dataclass(frozen=True, slots=True)
class OutputCheck:
    """One output tensor as the report shows it: the rule torch applied to it with its numbers, its errors and its
    own scale (so "rmse 0.28" reads as "1.1% of an output of rms 25.5")."""

    name: str
    shape: str  # "8×1000"
    dtype: str
    status: str  # pass / fail / n/a (torch's rule vs the reference; vs eager when no reference)
    rmse: float | None  # vs the reference (vs eager when no reference)
    eager_rmse: float | None
    bound_rmse: float | None
    max_abs: float | None
    rms: float | None  # the output's own scale: root mean square and largest magnitude of the reference
    max_value: float | None
    relative: float | None  # rmse / rms
    vs_eager_max_abs: float | None
    rule: str  # "rmse 0.280 <= 3 x 0.132 + 1e-3/10 = 0.396", "allclose to eager (tol 0.001)"
    nonfinite: int = 0


def output_check(o: OutputNumerics, v: OutputVerdict, *, is_eager: bool = False) -> OutputCheck:
    """An output's figures (the worker's) beside its verdict (analysis's): against the reference when it ran, else
    against eager; eager's own are the baseline, with no bound of its own."""
    ve, vr = o.vs_eager or OutputError(), o.vs_reference
    shape = "×".join(str(d) for d in o.shape) or "scalar"
    if vr is None:
        return OutputCheck(o.name, shape, o.dtype, v.status, ve.rmse, None, None, ve.max_abs, o.rms,
                           o.max_abs_value, ve.rel_rmse, ve.max_abs, say(v.rule), int(ve.new_nonfinite or 0))
    return OutputCheck(o.name, shape, o.dtype, v.status, vr.rmse, None if is_eager else vr.eager_rmse,
                       None if is_eager else vr.bound_rmse, vr.max_abs, o.rms, o.max_abs_value, vr.rel_rmse,
                       ve.max_abs, say(v.rule), int(vr.new_nonfinite or 0))


@dataclass(frozen=True, slots=True)
class NumericsRow:
    mode: str
    verdict: str  # combined pass / fail / n/a ("reference" for eager): ``call.status``
    reason: str
    vs_eager: OutputError  # every figure None when not compared
    vs_reference: OutputError
    reference: str  # "float64 on cpu" or why it was skipped
    nonfinite: int
    tolerance: Tolerance
    measured_reference: bool = False  # the mode was compared with the high-precision reference
    call: NumericsCall | None = None  # the same object as the Modes table's ModeRow.numerics
    outputs: tuple[OutputCheck, ...] = ()  # each output tensor: torch's rule with its numbers, the output's scale
    rule: str = ""  # the rule against the reference as the worker applied it (ToleranceUsed.vs_reference_rule)
    same_tol: float | None = None

    @property
    def hint(self) -> str:
        return self.call.hint if self.call is not None else ""


def numerics_row(m: ModeResult, call: NumericsCall | None = None) -> NumericsRow:
    n = m.numerics or NumericsResult()
    v = call if call is not None else numerics_call(m)
    ref = n.reference or ReferenceInfo()
    if ref.skipped:
        ref_text = f"skipped: {ref.skipped}"
    elif ref.dtype:
        made = f", from the model's {ref.weights} weights" if ref.weights else ""
        why = f" (float64 failed: {ref.float64_error})" if ref.float64_error else ""  # the reference ran in float32
        ref_text = f"{ref.dtype} on {ref.device or '?'}{made}{why}"
    else:
        ref_text = fmt.DASH
    tol = n.tolerance
    outputs = tuple(output_check(o, ov, is_eager=m.name == EAGER) for o, ov in zip(n.outputs, v.verdict.outputs))
    return NumericsRow(
        m.name, v.status, v.reason, n.vs_eager or OutputError(), n.vs_reference or OutputError(), ref_text,
        v.nonfinite, v.verdict.tolerance or TOLERANCES[DEFAULT_TOLERANCE_DTYPE], n.vs_reference is not None, v,
        outputs, tol.vs_reference_rule if tol is not None else "", tol.same_tol if tol is not None else None,
    )


def _counts(d: dict[str, Any] | None) -> str:
    if not d:
        return fmt.DASH
    shown = {k: v for k, v in d.items() if v}
    return ", ".join(f"{k} {v}" for k, v in shown.items()) or "no cache activity"


@dataclass(frozen=True, slots=True)
class CompileRow:
    mode: str
    cold_s: float | None
    warm_s: float | None
    cold_cache: str
    warm_cache: str
    graphs: int | None
    recompiles: int | None
    graph_breaks: int | None
    guard_failures: tuple[str, ...]
    note: str


def compile_row(m: ModeResult) -> CompileRow:
    c, d = m.compile, m.dynamo or DynamoStats()
    notes = []
    if c is not None:
        if c.reused:
            notes.append("nothing compiled at this point: the graph compiled at an earlier shape point covers it")
        elif c.warm_error:
            notes.append(f"warm compile failed: {c.warm_error}")
        elif c.warm_s is None:  # the warm process gives warm_s unless it failed or nothing compiled
            notes.append("warm compile not measured (--warm-compile)")
        if not c.cache_dir_fresh:
            notes.append("--cache-dir given: the first call may reuse an earlier cache")
        if c.cache.cold.get("fxgraph_cache_bypass"):
            notes.append("Inductor bypassed its FX-graph cache (freezing does: constants are part of the graph)")
        for which, replayed in (("first call", c.cache.replayed), ("warm compile", c.cache.warm_replayed)):
            if replayed:
                notes.append(f"{which}: a cache hit, whose replay of the cached compile's counters "
                             f"({_counts(replayed)}) is not counted")
        if c.coordesc_kept:
            notes.append(f"the later processes ran this compile's tuned Triton configurations ({c.coordesc_kept} "
                         "kept from the cache, summed over them); this torch would tune them again on a cache load "
                         "(pytorch/pytorch#172819), as --warm-compile measures")
    return CompileRow(m.name, c.cold_s if c is not None else m.first_call_s, c.warm_s if c is not None else None,
                      _counts(c.cache.cold if c is not None else None),
                      _counts(c.cache.warm) if c is not None and c.cache.warm is not None else fmt.DASH, d.graphs,
                      d.recompiles, d.graph_breaks, d.guard_failures, "; ".join(notes))


@dataclass(frozen=True, slots=True)
class MemoryRow:
    mode: str
    compile_peak: int | None  # first call: compile + autotune + one run
    steady_peak: int | None  # the timed calls only
    reserved_compile: int | None = None  # CUDA caching allocator, first call
    reserved_steady: int | None = None
    kind: str = ""  # "allocated (CUDA)" or "RSS (CPU)"


def memory_row(m: ModeResult) -> MemoryRow:
    mem = m.memory or MemoryPeaks()
    if mem.first_call_peak_allocated_bytes is not None or mem.peak_allocated_bytes is not None:
        return MemoryRow(m.name, mem.first_call_peak_allocated_bytes, mem.peak_allocated_bytes,
                         mem.first_call_peak_reserved_bytes, mem.peak_reserved_bytes, "allocated (CUDA)")
    if mem.peak_rss_growth_bytes is not None:
        # What the mode itself allocated: RSS above what the process held before the model was built.
        return MemoryRow(m.name, mem.first_call_rss_growth_bytes, mem.peak_rss_growth_bytes, kind="RSS growth (CPU)")
    return MemoryRow(m.name, mem.first_call_peak_rss_bytes, mem.peak_rss_bytes, kind="RSS, whole process (CPU)")


def roofline_line(g: GemmEpilogue) -> str:
    """"1.23 TFLOP/s (12% of peak), 45 GB/s (1% of peak), memory-bound" for one GEMM, or "" when unknown."""
    r = g.roofline
    if r is None:
        return ""
    f = fmt.flops_rate(r.tflops) + (f" ({r.pct_peak_flops:.1f}% of {r.peak_source} peak)"
                                    if r.pct_peak_flops is not None else "")
    b = fmt.bandwidth(r.gbps) + (f" ({r.pct_peak_bw:.1f}%)" if r.pct_peak_bw is not None else "")
    bound = f", {r.bound}-bound" if r.bound else ""
    return f"{f}, {b}{bound}"


def gemm_line(g: GemmEpilogue, name_limit: int = 60, *, label: str | None = None, count: int = 1,
              unfused_kernels: tuple[str, ...] | None = None) -> str:
    """One-line verdict for the terminal: "addmm 16×4096×4096 cuBLASLt: partial (...)", kernel names shortened
    to ``name_limit`` characters. A group of ``count`` GEMMs: its ``label`` for the module path and the count
    after it ("mm layers.0-15.mlp.up_proj ×16, 512 × 2816 × 1024 cuBLASLt: unfused (...)")."""
    where = g.module if label is None else label
    module = f" {where}" if where else ""
    many = f" ×{count}," if count > 1 else ""
    head = f"{g.op or 'gemm'}{module}{many} {fmt.shape(g.m, g.n, g.k, g.batch)} {g.backend}: {g.verdict}"
    parts = []
    kernels = g.unfused_kernels if unfused_kernels is None else unfused_kernels
    if g.fused:
        parts.append("fused " + ", ".join(g.fused))
    if g.unfused:
        names = ", ".join(k if k == fmt.ELLIPSIS else fmt.kernel_name(k, name_limit) for k in kernels)
        where = f" in {names}" if kernels else ""
        parts.append("unfused " + ", ".join(g.unfused) + where)
    if g.confidence == "trace-only":
        parts.append("from the trace only")
    return head + (f" ({'; '.join(parts)})" if parts else "")
