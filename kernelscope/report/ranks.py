"""The per-rank view of modes run under torchrun (issue 17): one table per mode, read by html and markdown.

Every figure comes from ``ModeResult.ranks`` (analysis/ranks.py) and, in ``compare``, from analysis/compare.py's
``RankDelta``; this module only formats them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.analysis.compare import RankDelta
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


@dataclass(frozen=True, slots=True)
class RanksView:
    mode: str
    world_size: int
    headline: str  # "rank 1 is the slowest: headline figures are its; skew 1.05x"
    rows: tuple[RankRow, ...]
    differ: str  # "ranks 1, 3 differ from rank 0" or ""


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
        slowest=r.slowest, error=r.error)


def ranks_view(m: ModeResult) -> RanksView | None:
    if not m.ranks:
        return None
    skew = f"; skew slowest/fastest {m.rank_skew:.2f}x" if m.rank_skew is not None else ""
    head = (f"rank {m.slowest_rank} is the slowest: the mode's figures are its{skew}"
            if m.slowest_rank is not None and len(m.ranks) > 1 else f"{len(m.ranks)} rank{skew}")
    differ = (f"rank{'s' if len(m.ranks_differ) > 1 else ''} {', '.join(map(str, m.ranks_differ))} "
              "differ from rank 0" if m.ranks_differ else "")
    return RanksView(mode=m.name, world_size=m.world_size or len(m.ranks), headline=head,
                     rows=tuple(rank_row(r) for r in m.ranks), differ=differ)


def ranks_views(result: RunResult) -> tuple[RanksView, ...]:
    return tuple(v for v in (ranks_view(m) for m in result.modes) if v is not None)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|")


def markdown_tables(result: RunResult) -> list[str]:
    """summary.md's per-rank tables (none for a run on one process)."""
    out: list[str] = []
    for v in ranks_views(result):
        out += ["", f"### Ranks: {v.mode} ({v.world_size} ranks)", "", f"{v.headline}.", "",
                "| rank | status | latency | kernels/iter | comm/iter | comm overlap | peak mem | GEMMs "
                "| differs from rank 0 |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in v.rows:
            mark = " (slowest)" if r.slowest else ""
            cells = [f"{r.rank}{mark}", r.status, r.latency, r.kernels, r.comm, r.overlap, r.memory, r.gemms,
                     r.differs or fmt.DASH]
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return out


# ------------------------------------------------------------------------------------------------- compare
def rank_delta_json(d: RankDelta) -> dict:
    def side(r: RankResult | None) -> dict | None:
        if r is None:
            return None
        c = r.communication
        return {"status": r.status, "median_ms": r.latency_ms, "kernels_per_iter": r.kernels_per_iter,
                "communication_us_per_iter": c.time_us_per_iter if c else None,
                "overlap_fraction": c.overlap_fraction if c else None, "slowest": r.slowest}

    return {"rank": d.rank, "base": side(d.base), "head": side(d.head), "ratio": d.ratio,
            "verdicts_changed": list(d.verdicts_changed)}


def compare_markdown(mode: str, deltas: tuple[RankDelta, ...]) -> list[str]:
    if not deltas:
        return []
    out = ["", f"### Ranks: {mode}", "", "| rank | latency base → head | change | kernels/iter | comm/iter | "
           "GEMM verdicts changed |", "| --- | --- | --- | --- | --- | --- |"]
    for d in deltas:
        def lat(r: RankResult | None) -> str:
            return fmt.ms(r.latency_ms) if r else fmt.DASH

        def kern(r: RankResult | None) -> str:
            return fmt.count(r.kernels_per_iter) if r else fmt.DASH

        def comm(r: RankResult | None) -> str:
            return fmt.us(r.communication.time_us_per_iter) if r and r.communication else fmt.DASH

        change = fmt.change(d.ratio) if d.ratio is not None else fmt.DASH
        cells = [str(d.rank), f"{lat(d.base)} → {lat(d.head)}", change, f"{kern(d.base)} → {kern(d.head)}",
                 f"{comm(d.base)} → {comm(d.head)}", "; ".join(d.verdicts_changed) or fmt.DASH]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return out
