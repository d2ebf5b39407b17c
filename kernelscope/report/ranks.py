"""The per-rank view of modes run under torchrun: one table per mode, read by html and markdown.

Every figure comes from ``ModeResult.ranks`` (analysis/ranks.py) and, in ``compare`` and ``upgrade-check``, from
analysis/ranks.py's ``RankDelta``; this module only formats them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernelscope import fmt
from kernelscope.analysis.ranks import RankDelta
from kernelscope.report.links import relative_href
from kernelscope.result import ModeResult, RankResult, RunResult


@dataclass(frozen=True, slots=True)
class RankRow:
    rank: int
    status: str
    latency: str
    kernels: str
    comm: str  # communication time per iteration
    overlap: str  # share of it overlapping compute
    memory: str
    gemms: str
    differs: str  # "" or "kernel sequence, GEMM verdicts"
    slowest: bool
    error: str = ""
    trace: str = ""  # the rank's trace, relative to the result directory
    trace_href: str = ""  # the same as a safe relative link ("" when it is not one: result.json may be hostile)


@dataclass(frozen=True, slots=True)
class RanksView:
    mode: str
    world_size: int
    headline: str  # "rank 1 is the slowest: headline figures are its; skew 1.05x"
    rows: tuple[RankRow, ...]
    differ: str  # "ranks 1, 3 differ from rank 0" or ""
    point: str = ""  # the shape point's label in a sweep ("batch_size=16"), else ""
    base_rank: int = 0  # the rank the others are compared with: the first one this host ran

    @property
    def title(self) -> str:
        """"eager", or "eager @ batch_size=16" in a sweep."""
        return f"{self.mode} @ {self.point}" if self.point else self.mode


def _share(us: float, iteration_ms: float | None) -> str:
    if not iteration_ms:
        return ""
    return f" ({100 * us / (iteration_ms * 1000):.0f}% of the profiled iteration)"


def rank_row(r: RankResult) -> RankRow:
    c = r.communication
    return RankRow(
        rank=r.rank, status=r.status, latency=fmt.ms(r.latency_ms), kernels=fmt.count(r.kernels_per_iter),
        comm=(fmt.us(c.time_us_per_iter) + _share(c.time_us_per_iter, r.profiled_iteration_ms)) if c else fmt.DASH,
        overlap=(f"{100 * c.overlap_fraction:.0f}%" if c and c.overlap_fraction is not None else fmt.DASH),
        memory=fmt.nbytes(r.peak_memory_bytes), gemms=r.gemm_summary or fmt.DASH, differs=", ".join(r.differs),
        slowest=r.slowest, error=r.error, trace=r.trace or "", trace_href=relative_href(r.trace) or "")


def ranks_view(m: ModeResult, point: str = "") -> RanksView | None:
    if not m.ranks:
        return None
    skew = f"; skew slowest/fastest {m.rank_skew:.2f}x" if m.rank_skew is not None else ""
    world = m.world_size or len(m.ranks)
    head = (f"rank {m.slowest_rank} is the slowest: the mode's figures are its{skew}"
            if m.slowest_rank is not None and len(m.ranks) > 1 else f"the mode's figures are rank {m.ranks[0].rank}'s")
    if len(m.ranks) < world:  # one host of several (--nnodes): each host's result holds the ranks that ran on it
        head = f"{len(m.ranks)} of {world} ranks ran on this host (the other hosts' results hold the rest); {head}"
    base = m.ranks[0].rank  # what the others are compared with (analysis/ranks.py combine_ranks)
    differ = (f"rank{'s' if len(m.ranks_differ) > 1 else ''} {', '.join(map(str, m.ranks_differ))} "
              f"differ from rank {base}" if m.ranks_differ else "")
    return RanksView(mode=m.name, world_size=world, headline=head,
                     rows=tuple(rank_row(r) for r in m.ranks), differ=differ, point=point, base_rank=base)


def ranks_views(result: RunResult) -> tuple[RanksView, ...]:
    """One view per mode run under torchrun; in a sweep, per shape point and mode (``result.modes`` is then the
    first point's, and every point has its own ranks)."""
    groups = [(p.label, p.modes) for p in result.points] if result.points else [("", result.modes)]
    return tuple(v for label, modes in groups for v in (ranks_view(m, label) for m in modes) if v is not None)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|")


def markdown_tables(result: RunResult, max_tables: int | None = None) -> list[str]:
    """summary.md's per-rank tables (none for a run on one process): per mode, and per shape point of a sweep;
    past ``max_tables`` (summary.md must fit a PR comment) a line says how many more report.html has."""
    out: list[str] = []
    views = ranks_views(result)
    shown = views if max_tables is None else views[:max_tables]
    for v in shown:
        out += ["", f"### Ranks: {v.title} ({v.world_size} ranks)", "", f"{v.headline}.", "",
                "| rank | status | latency | kernels/iter | comm/iter | comm overlap | peak mem | GEMMs "
                f"| differs from rank {v.base_rank} |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in v.rows:
            mark = " (slowest)" if r.slowest else ""
            cells = [f"{r.rank}{mark}", r.status, r.latency, r.kernels, r.comm, r.overlap, r.memory, r.gemms,
                     r.differs or fmt.DASH]
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    if len(shown) < len(views):
        out += ["", f"_{len(views) - len(shown)} more rank tables in report.html._"]
    return out


# ------------------------------------------------------------------------------------------ compare, upgrade
def rank_delta_json(d: RankDelta, sides: tuple[str, str] = ("base", "head")) -> dict[str, Any]:
    """One rank of two runs for compare.json (sides "base"/"head") and upgrade-check's ("before"/"after")."""
    def side(r: RankResult | None) -> dict[str, Any] | None:
        if r is None:
            return None
        c = r.communication
        return {"status": r.status, "median_ms": r.latency_ms, "kernels_per_iter": r.kernels_per_iter,
                "communication_us_per_iter": c.time_us_per_iter if c else None,
                "overlap_fraction": c.overlap_fraction if c else None, "slowest": r.slowest,
                "verdicts": list(r.verdicts)}

    return {"rank": d.rank, sides[0]: side(d.base), sides[1]: side(d.head), "ratio": d.ratio,
            "verdicts_changed": list(d.verdicts_changed), "fusion_lost": list(d.fusion_lost)}


def compare_markdown(mode: str, deltas: tuple[RankDelta, ...]) -> list[str]:
    """compare.md's per-rank table of one mode."""
    return delta_markdown(mode, [rank_delta_json(d) for d in deltas])


def delta_markdown(mode: str, rows: list[dict[str, Any]], sides: tuple[str, str] = ("base", "head")) -> list[str]:
    """A per-rank table of one mode in two runs, from ``rank_delta_json`` rows (compare.md, upgrade-check's
    compare.md)."""
    if not rows:
        return []
    a, b = sides
    out = ["", f"### Ranks: {mode}", "", f"| rank | latency {a} → {b} | change | kernels/iter | comm/iter | "
           "GEMM verdicts changed |", "| --- | --- | --- | --- | --- | --- |"]

    def arrow(d: dict[str, Any], key: str, show: Callable[[Any], str]) -> str:
        def one(s: dict[str, Any] | None) -> str:
            return show(s[key]) if s and s.get(key) is not None else fmt.DASH

        return f"{one(d[a])} → {one(d[b])}"

    for d in rows:
        change = fmt.change(d["ratio"]) if d["ratio"] is not None else fmt.DASH
        cells = [str(d["rank"]), arrow(d, "median_ms", fmt.ms), change, arrow(d, "kernels_per_iter", fmt.count),
                 arrow(d, "communication_us_per_iter", fmt.us), "; ".join(d["verdicts_changed"]) or fmt.DASH]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return out


def upgrade_markdown(modes: list[dict[str, Any]]) -> list[str]:
    """upgrade-check's compare.md: a per-rank table per mode run under torchrun (compare.json ``modes[].ranks``)."""
    out: list[str] = []
    for m in modes:
        out += delta_markdown(m["name"], m.get("ranks") or [], ("before", "after"))
    return out
