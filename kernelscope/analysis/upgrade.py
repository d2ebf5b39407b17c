"""The upgrade comparison: the same model under the old install (before) and the new one (after).

``compare_upgrade`` builds an ``UpgradeComparison`` (plain frozen data, what the tests assert on): per mode the
latency ratio after/before with its bootstrap interval, compile time, kernels per iteration, peak memory and the
numerics verdict on each side; per GEMM (``pairing.match_gemms``: by module path and shape, else by op and shape,
else by shape alone, since an upgrade may turn an addmm into mm + a fused bias) the backend and epilogue verdict on
each side; the regressions and improvements. report/upgrade.py phrases and renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelscope.analysis.compare import environment_changes, ok_latency
from kernelscope.analysis.contention import busy_host_sides, contended_sides
from kernelscope.analysis.numerics import NumericsVerdict, numerics_verdict
from kernelscope.analysis.pairing import GemmPair, match_gemms
from kernelscope.analysis.ranks import RankDelta, compare_ranks
from kernelscope.analysis.speedup import EAGER
from kernelscope.analysis.stats import Ratio, latency_ratio
from kernelscope.result import ModeResult, Note, RunResult, Status

KIND = "upgrade"  # compare.json's "kind" in an upgrade-check directory


@dataclass(frozen=True, slots=True)
class UpgradeMode:
    name: str
    before: ModeResult | None
    after: ModeResult | None
    latency: Ratio  # after median / before median
    numerics_before: NumericsVerdict | None
    numerics_after: NumericsVerdict | None
    gemms: tuple[GemmPair, ...]
    # "before" / "after": that side timed this mode on a busy machine (analysis/contention.py), or on a busy host
    # where the other side's was quiet
    contended: tuple[str, ...] = ()
    busy_host: tuple[str, ...] = ()
    ranks: tuple[RankDelta, ...] = ()  # torchrun runs: each rank before and after, matched by rank index
    compile_s: tuple[float | None, float | None] = (None, None)  # each side's cold compile, else its first call

    @property
    def change(self) -> str:
        """Latency: "faster" / "slower" (the whole 95% interval past 1.0), "none" (within noise), "n/a"."""
        r = self.latency
        if r.value is None:
            return "n/a"
        if r.within_noise:
            return "none"
        return "faster" if r.value < 1 else "slower"

    @property
    def status_change(self) -> str:
        """"new failure", "fixed", "available, fails" (unavailable before, e.g. NVGEMM on torch < 2.14, and
        failing after), "only before", "only after", "still failing", "still unavailable" or ""."""
        b, a = self.before, self.after
        if b is None:
            return "only after"
        if a is None:
            return "only before"
        if _ok(b) and not _ok(a):
            return "new failure"
        if not _ok(b) and _ok(a):
            return "fixed"
        unavailable = Status.UNAVAILABLE.value
        if b.status == unavailable and a.status != unavailable:
            return "available, fails"
        if not _ok(b) and not _ok(a):
            return "still unavailable" if b.status == a.status == unavailable else "still failing"
        return ""

    @property
    def numerics_regressed(self) -> bool:
        na, nb = self.numerics_after, self.numerics_before
        return na is not None and na.status == "fail" and (nb is None or nb.status != "fail")

    @property
    def regressions(self) -> tuple[Note, ...]:
        """What the upgrade made worse, in order: "regressed-new-failure", "regressed-slower" (``busy``: "machine"
        or "host" when that side was timed on a busy one), "regressed-numerics", "regressed-fusion-lost", and
        "regressed-fusion-lost-on-rank" per rank of a torchrun mode that fused less."""
        out = []
        if self.status_change == "new failure":
            out.append(Note("regressed-new-failure"))
        if self.change == "slower":
            # still a regression (the gate cannot vouch for the code), named so nobody reads it as the upgrade's
            busy = "machine" if self.contended else "host" if self.busy_host else None
            out.append(Note("regressed-slower", {"busy": busy}))
        if self.numerics_regressed:
            out.append(Note("regressed-numerics"))
        if any(g.change in ("fusion lost", "fusion changed") and g.lost for g in self.gemms):
            out.append(Note("regressed-fusion-lost"))
        out += [Note("regressed-fusion-lost-on-rank", {"rank": r})
                for r in dict.fromkeys(r for r, _ in self.rank_fusion_lost)]
        return tuple(out)

    @property
    def rank_fusion_lost(self) -> tuple[tuple[int, str], ...]:
        """(rank, "fc1: fused -> partial") for each GEMM of a rank that fused less after. The mode's GEMM rows are
        its slowest rank's on each side: when that is one rank on both, its loss is the mode's own, not repeated."""
        b, a = self.before, self.after
        same = b is not None and a is not None and b.slowest_rank is not None and b.slowest_rank == a.slowest_rank
        skip = a.slowest_rank if same and a is not None else None
        return tuple((d.rank, line) for d in self.ranks if d.rank != skip for line in d.fusion_lost)

    @property
    def improved(self) -> bool:
        """Faster beyond noise, running again, or a GEMM that fuses more."""
        return (self.change == "faster" or self.status_change == "fixed"
                or any(g.change == "fusion gained" for g in self.gemms))



@dataclass(frozen=True, slots=True)
class UpgradeComparison:
    before: RunResult
    after: RunResult
    modes: tuple[UpgradeMode, ...]
    environment: tuple[tuple[str, str, str], ...]  # (key, before, after) where they differ
    # each side's versions, interpreter, device and dtype, and whether the runs differ in torch (the upgrade),
    # model, device or dtype (``comparability``)
    comparable: dict[str, Any] = field(default_factory=dict)

    def mode(self, name: str) -> UpgradeMode | None:
        return next((m for m in self.modes if m.name == name), None)

    @property
    def regressions(self) -> tuple[tuple[str, Note], ...]:
        return tuple((m.name, r) for m in self.modes for r in m.regressions)

    @property
    def improvements(self) -> tuple[str, ...]:
        """The modes the upgrade made better (``UpgradeMode.improved``)."""
        return tuple(m.name for m in self.modes if m.improved)


def _ok(m: ModeResult | None) -> bool:
    return m is not None and m.status == Status.OK.value


def cold_compile_s(m: ModeResult | None) -> float | None:
    if m is None:
        return None
    cold = m.compile.cold_s if m.compile is not None else None
    return cold if cold is not None else m.first_call_s


def compare_upgrade(before: RunResult, after: RunResult) -> UpgradeComparison:
    names = list(dict.fromkeys([m.name for m in before.modes] + [m.name for m in after.modes]))
    modes = []
    for name in names:
        mb, ma = before.mode(name), after.mode(name)
        r = latency_ratio(ok_latency(ma), ok_latency(mb), between_runs=True)
        sides = (("before", ok_latency(mb)), ("after", ok_latency(ma)))
        modes.append(UpgradeMode(
            name=name, before=mb, after=ma, latency=r,
            numerics_before=numerics_verdict(mb.numerics, is_eager=name == EAGER) if mb and _ok(mb) else None,
            numerics_after=numerics_verdict(ma.numerics, is_eager=name == EAGER) if ma and _ok(ma) else None,
            gemms=match_gemms(mb.gemms, ma.gemms) if mb and ma else (),
            contended=contended_sides(sides), busy_host=busy_host_sides(sides), ranks=compare_ranks(mb, ma),
            compile_s=(cold_compile_s(mb), cold_compile_s(ma)),
        ))
    return UpgradeComparison(before, after, tuple(modes), environment_changes(before.environment, after.environment),
                             comparability(before, after))


def comparability(b: RunResult, a: RunResult) -> dict[str, Any]:
    """Each side's versions, interpreter, device and dtype, and whether the runs differ in torch (the upgrade),
    model, device or dtype."""
    eb, ea = b.environment, a.environment
    side = {k: {"torch": e.torch, "python": e.python, "triton": e.triton,
                "interpreter": e.interpreter.path if e.interpreter is not None else None, "device": r.device,
                "dtype": r.dtype}
            for k, e, r in (("before", eb, b), ("after", ea, a))}
    return {**side, "upgrade": eb.torch != ea.torch, "same_model": b.model == a.model,
            "same_device": b.device == a.device, "same_dtype": b.dtype == a.dtype}


# ------------------------------------------------------------------------------------------- the directory
def upgrade_dir(path: str | Path) -> Path | None:
    """The upgrade-check directory ``path`` is (it holds compare.json of kind "upgrade" and before/, after/ with
    result.json), or None for any other directory."""
    import json

    p = Path(path)
    try:
        data = json.loads((p / "compare.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        return None
    return p if all((p / side / "result.json").is_file() for side in ("before", "after")) else None


def load_upgrade(path: Path) -> UpgradeComparison:
    """The comparison, rebuilt from before/result.json and after/result.json (the results are the facts;
    compare.json is their rendering)."""
    from kernelscope.result_file import load_result

    return compare_upgrade(load_result(path / "before"), load_result(path / "after"))
