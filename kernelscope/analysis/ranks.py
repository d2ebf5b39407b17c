"""A mode run under torchrun: one ModeResult per rank (the ordinary per-mode analysis, analysis/mode.py), combined
into the mode's result. Pure: paths in, result out; no torch.

The mode's headline figures are the slowest rank's: a synchronous step waits for its slowest rank, so that is
what the user's step costs. ``rank_skew`` = slowest / fastest median. A rank whose kernel sequence (iteration 0,
launch order) or GEMM verdicts differ from rank 0's is named: ranks of one SPMD program should run the same
kernels, and one that does not (a shard of another shape that picked another GEMM kernel, a rank-dependent
branch) is where a skew usually comes from.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelscope import fmt
from kernelscope.errors import UsageError
from kernelscope.result import ModeResult, Note, RankResult, RunResult, Status, Verdict

if TYPE_CHECKING:  # imported where a capture is read (the reports import this module for every run)
    from kernelscope.analysis.mode import TraceFields
    from kernelscope.capture_record import CaptureRecord


def _record(capture: CaptureRecord | Mapping[str, Any]) -> CaptureRecord:
    from kernelscope.capture_record import CaptureRecord, capture_from_json

    return capture if isinstance(capture, CaptureRecord) else capture_from_json(capture)


def build_any_mode_result(out_dir: Path, capture: CaptureRecord | Mapping[str, Any], *,
                          iterations: int | None = None, peaks: dict[str, Any] | None = None,
                          traced: TraceFields | None = None) -> ModeResult:
    """build_mode_result for a plain record (``traced``: its files' analysis made ahead), build_ranked_mode_result
    for a torchrun group's."""
    from kernelscope.analysis.mode import build_mode_result

    rec = _record(capture)
    if rec.rank_records:
        return build_ranked_mode_result(out_dir, rec, iterations=iterations, peaks=peaks)
    return build_mode_result(out_dir, rec, iterations=iterations, peaks=peaks, traced=traced)


def read_rank_capture(out_dir: Path, rel: str, rank: int, mode: str) -> CaptureRecord:
    from kernelscope.capture_record import CaptureRecord, read_capture

    rec = read_capture(out_dir / rel)
    if rec is not None:
        return rec
    return CaptureRecord(mode=mode, status=Status.FAILED.value, error_kind="crash",
                         error=f"rank {rank} wrote no capture record (torchrun stops every rank when one of them "
                               "fails)")


def build_ranked_mode_result(out_dir: Path, capture: CaptureRecord | Mapping[str, Any], *,
                             iterations: int | None = None, peaks: dict[str, Any] | None = None) -> ModeResult:
    """The mode's result from each rank's capture record and trace."""
    from kernelscope.analysis.mode import build_mode_result

    group = _record(capture)
    mode = group.mode or "?"
    paths = list(group.rank_records)
    per_rank, ids = [], []
    world: int | None = group.world_size
    for r, rel in enumerate(paths):
        rec = read_rank_capture(out_dir, rel, r, mode)
        dist = rec.distributed
        ids.append(rec.rank if rec.rank is not None else dist.rank if dist is not None else r)  # global rank
        world = (dist.world_size if dist is not None else None) or world
        if group.status in ("timeout", "interrupted") and rec.status != Status.OK.value:
            rec = dataclasses.replace(rec, status=group.status, error=group.error or rec.error)
        per_rank.append(build_mode_result(out_dir, dataclasses.replace(rec, mode=mode), iterations=iterations,
                                          peaks=peaks))
    return combine_ranks(per_rank, captures=paths, rank_ids=ids, world_size=world)


def rank_latency(m: ModeResult) -> float | None:
    """A rank's steady median; for a trace alone (``analyze DIR``), its profiled iteration's time."""
    if m.latency_ms is not None:
        return m.latency_ms.median
    return m.profiled_iteration_ms


def _sequence(m: ModeResult) -> tuple[str, ...]:
    if m.timeline:
        return tuple(e.name for e in m.timeline)
    return tuple(sorted(f"{k.name} x{k.calls_per_iter:g}" for k in m.kernels))


def _verdicts(m: ModeResult) -> tuple[str, ...]:
    return tuple(f"{g.module or g.id}: {g.verdict}" for g in m.gemms)


def combine_ranks(per_rank: Sequence[ModeResult], *, captures: Sequence[str | None] = (),
                  rank_ids: Sequence[int] = (), world_size: int | None = None) -> ModeResult:
    """One ModeResult per rank, in rank order -> the mode's: the slowest rank's fields, with ``ranks``.
    ``rank_ids``: the ranks' numbers (default 0..N-1; one host of several holds only its own ranks); the first
    one is what the others are compared with."""
    ids = list(rank_ids) or list(range(len(per_rank)))
    if not per_rank:
        raise ValueError("combine_ranks needs at least one rank")
    lat = [rank_latency(m) if m.status == Status.OK.value else None for m in per_rank]
    timed = [i for i, v in enumerate(lat) if v is not None]
    slowest = max(timed, key=lambda i: lat[i]) if timed else 0  # type: ignore[arg-type,return-value]
    fastest = min(timed, key=lambda i: lat[i]) if timed else 0  # type: ignore[arg-type,return-value]
    skew = (lat[slowest] / lat[fastest]) if timed and lat[fastest] else None  # type: ignore[operator]
    base_seq, base_verdicts = _sequence(per_rank[0]), _verdicts(per_rank[0])
    ranks, differ = [], []
    for r, m in enumerate(per_rank):
        d: list[str] = []
        if r and m.status == Status.OK.value and per_rank[0].status == Status.OK.value:
            if _sequence(m) != base_seq:
                d.append("kernel sequence")
            if _verdicts(m) != base_verdicts:
                d.append("GEMM verdicts")
        if d:
            differ.append(ids[r])
        ranks.append(RankResult(
            rank=ids[r], status=m.status, error=m.error if m.status != Status.OK.value else "", latency_ms=lat[r],
            profiled_iteration_ms=m.profiled_iteration_ms,
            kernels_per_iter=m.kernels_per_iter, gemm_summary=m.gemm_summary, verdicts=_verdicts(m),
            peak_memory_bytes=m.peak_memory_bytes, communication=m.communication, trace=m.trace,
            capture=captures[r] if r < len(captures) else None, differs=tuple(d), slowest=r == slowest and bool(timed)))
    head = per_rank[slowest]
    failed = [m for m in per_rank if m.status != Status.OK.value]
    fields: dict[str, Any] = {}
    findings = list(head.findings)
    if failed and head.status == Status.OK.value:
        # One rank that failed fails the mode: the others' measurements stand in ``ranks``.
        r = ids[per_rank.index(failed[0])]
        fields.update(status=failed[0].status, error=f"rank {r}: {failed[0].error}", error_kind=failed[0].error_kind)
    if len(per_rank) > 1 and skew is not None:
        findings.append(Note("slowest-rank", {"ranks": len(per_rank), "slowest": ids[slowest],
                                              "fastest": ids[fastest], "skew": skew}))
    if differ:
        by_id = {x.rank: x for x in ranks}
        findings.append(Note("ranks-differ", {"from": ids[0], "ranks": [[r, list(by_id[r].differs)]
                                                                       for r in differ]}))
    return dataclasses.replace(head, world_size=world_size or len(per_rank), ranks=tuple(ranks),
                               slowest_rank=ids[slowest], rank_skew=skew, ranks_differ=tuple(differ),
                               findings=tuple(findings), **fields)


_RANK = re.compile(rb'"distributedInfo"\s*:\s*\{[^{}]*?"rank"\s*:\s*(\d+)')


def trace_rank(path: Path) -> int | None:
    """``distributedInfo.rank`` of a trace, read from its head (Kineto writes the metadata before the events), or
    from the whole trace when the head does not have it; None when the trace has none."""
    import gzip

    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as f:
            head = f.read(1 << 20)
    except OSError as exc:
        raise UsageError(f"trace file {path} cannot be read ({exc})", "check the path") from exc
    m = _RANK.search(head)
    if m:
        return int(m.group(1))
    if b'"distributedInfo"' not in head and len(head) < (1 << 20):
        return None
    from kernelscope.trace import load_trace

    info = load_trace(path).meta.get("distributedInfo")
    rank = info.get("rank") if isinstance(info, dict) else None
    return rank if isinstance(rank, int) else None


def rank_trace_files(directory: Path) -> list[tuple[int, Path]]:
    """The rank traces in a directory (as torchrun runs write them: one ``*.pt.trace.json(.gz)`` per rank,
    each with ``distributedInfo.rank``), in rank order. Refused: no trace, two traces of one rank, a trace
    without distributedInfo among several."""
    files = sorted(p for p in directory.iterdir() if p.is_file() and p.name.endswith((".pt.trace.json",
                                                                                      ".pt.trace.json.gz")))
    if not files:
        files = sorted(p for p in directory.iterdir() if p.is_file() and p.name.endswith((".json", ".json.gz")))
    if not files:
        raise UsageError(f"{directory} holds no trace files (*.pt.trace.json or *.pt.trace.json.gz)",
                         "pass the folder torchrun's ranks wrote their traces into (e.g. tb/<mode>/), or one trace")
    out: list[tuple[int, Path]] = []
    for p in files:
        rank = trace_rank(p)
        if not isinstance(rank, int):
            if len(files) > 1:
                raise UsageError(f"{p} has no distributedInfo.rank, and {directory} holds {len(files)} traces",
                                 "pass a folder of one run's rank traces (torch.profiler writes distributedInfo "
                                 "when a process group is initialised), or the trace file itself")
            rank = 0
        out.append((rank, p))
    ranks = [r for r, _ in out]
    dup = next((r for r in ranks if ranks.count(r) > 1), None)
    if dup is not None:
        names = ", ".join(p.name for r, p in out if r == dup)
        raise UsageError(f"{directory} holds several traces of rank {dup} ({names})",
                         "keep one run's traces in the folder (a rerun of the same run adds new files)")
    return sorted(out)


def analyze_rank_dir(directory: Path, *, mode: str, iterations: int | None, command: str) -> RunResult:
    """``kernelscope analyze DIR``: the per-rank analysis of a folder of rank traces."""
    from kernelscope.analysis.mode import analyze_trace_file, build_run_result

    files = rank_trace_files(directory)
    runs = [analyze_trace_file(p, [], mode=mode, iterations=iterations, log_path=None, command=command)
            for _, p in files]
    if [r for r, _ in files] != list(range(len(files))):
        raise UsageError(f"{directory} holds traces of ranks {[r for r, _ in files]}, not 0..{len(files) - 1}",
                         "pass every rank's trace of one run")
    per_rank = [run.modes[0] for run in runs]
    mr = combine_ranks(per_rank, captures=[None] * len(per_rank))
    first = runs[0]
    findings = tuple(n for run in runs for n in run.findings)
    return build_run_result([mr], environment=first.environment, command=command, model=directory.name,
                            device=first.device, dtype="", settings={"source": "analyze", "iterations": iterations,
                                                                      "ranks": len(files)},
                            findings=findings, peaks=first.peaks)


# ------------------------------------------------------------------------------------ two runs, rank by rank
# How much of its epilogue a GEMM fused: a verdict lower on this scale after than before lost fusion. "none" (no
# epilogue to fuse) and "unknown" are off the scale.
_FUSION_RANK = {Verdict.FUSED.value: 2, Verdict.PARTIAL.value: 1, Verdict.UNFUSED.value: 0}


@dataclass(frozen=True, slots=True)
class RankDelta:
    """One rank of a mode in two runs (``compare`` base/head, ``upgrade-check`` before/after), matched by rank
    index. The noise-aware call is the mode's (its headline is the slowest rank's); per rank there is one median
    per run, so only the ratio is given."""

    rank: int
    base: RankResult | None
    head: RankResult | None
    ratio: float | None  # head / base median
    verdicts_changed: tuple[str, ...]  # "<GEMM>: base verdict -> head verdict"
    fusion_lost: tuple[str, ...] = ()  # the changes whose head verdict fused less ("fc1: fused -> partial")


def compare_ranks(base: ModeResult | None, head: ModeResult | None) -> tuple[RankDelta, ...]:
    b = {r.rank: r for r in (base.ranks if base else ())}
    h = {r.rank: r for r in (head.ranks if head else ())}
    out = []
    for rank in sorted(set(b) | set(h)):
        rb, rh = b.get(rank), h.get(rank)
        ratio = (rh.latency_ms / rb.latency_ms if rb and rh and rb.latency_ms and rh.latency_ms is not None
                 else None)
        changed: list[str] = []
        lost: list[str] = []
        if rb and rh:
            vb = dict(_split_verdict(v) for v in rb.verdicts if ": " in v)
            vh = dict(_split_verdict(v) for v in rh.verdicts if ": " in v)
            for k in dict.fromkeys([*vb, *vh]):
                if vb.get(k) == vh.get(k):
                    continue
                line = f"{k}: {vb.get(k, fmt.DASH)} -> {vh.get(k, fmt.DASH)}"
                changed.append(line)
                before, after = _FUSION_RANK.get(vb.get(k, "")), _FUSION_RANK.get(vh.get(k, ""))
                if before is not None and after is not None and after < before:
                    lost.append(line)
        out.append(RankDelta(rank, rb, rh, ratio, tuple(changed), tuple(lost)))
    return tuple(out)


def _split_verdict(v: str) -> tuple[str, str]:
    label, _, verdict = v.rpartition(": ")
    return label, verdict
