"""The mode-level view of its GEMMs: typed evidence, identical layers grouped, and what unfused epilogues cost.

Pure functions over the per-GEMM verdicts.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from kernelscope.result import EpilogueCost, Evidence, GemmEpilogue, GemmGroup, Verdict

_TAG = re.compile(r"^\[([\w-]+)\]")
_WHERE = re.compile(r"\(([\w.\-]+\.py:\d+)\)|\b([\w.\-]+\.py:\d+)\b|log line (\d+)")
_KIND = {
    "code-gemm": "code", "template-epilogue": "code", "dataflow": "code", "extern-gemm": "code", "prologue": "code",
    "bias-in-call": "code", "beta-accumulate": "code", "onednn-post-op": "code", "name-origins": "code",
    "launch-order": "trace", "eager-op": "trace", "eager-sequence": "trace", "trace-only": "trace",
    "split-k": "trace", "cublaslt-bias-epilogue": "trace", "iterations": "trace", "addmm-activation": "trace",
    "launching-op": "trace",
    "autotune-log": "log", "fusion-log": "log", "fusion-benchmark": "log", "nvgemm-log": "log",
    "provenance": "provenance", "module": "provenance",
}


def evidence(text: str) -> Evidence:
    """'[dataflow] gelu runs in ... (graph_0.py:42)' -> Evidence('code', text, 'graph_0.py:42')."""
    m = _TAG.match(text)
    tag = m.group(1) if m else ""
    w = _WHERE.search(text)
    where = ""
    if w:
        where = w.group(1) or w.group(2) or (f"log:{w.group(3)}" if w.group(3) else "")
    return Evidence(_KIND.get(tag, "rule" if tag else "note"), text, where)


_VERDICT_ORDER = (Verdict.FUSED, Verdict.PARTIAL, Verdict.UNFUSED, Verdict.NONE, Verdict.UNKNOWN)


def summarize(gemms: Sequence[GemmEpilogue]) -> str:
    """'GEMMs 2: fused 1, partial 1' (verdicts in a fixed order), plus '(trace-only)' when that is all."""
    counts = Counter(g.verdict for g in gemms)
    parts = [f"{v.value} {counts[v.value]}" for v in _VERDICT_ORDER if counts[v.value]]
    text = f"GEMMs {len(gemms)}" + (": " + ", ".join(parts) if parts else "")
    if gemms and all(g.confidence == "trace-only" for g in gemms):
        text += " (trace-only)"
    return text


# ------------------------------------------------------------------------------------------------------------
# Identical layers

_INDEX = re.compile(r"(?<=\.)\d+(?=\.|$)|^\d+(?=\.)")


def _pattern(module: str) -> tuple[str, tuple[int, ...]]:
    """'layers.3.mlp.gate_proj' -> ('layers.#.mlp.gate_proj', (3,))."""
    idx = tuple(int(x) for x in _INDEX.findall(module))
    return _INDEX.sub("#", module), idx


def _ranges(values: Sequence[int]) -> str:
    vs = sorted(set(values))
    parts: list[str] = []
    start = prev = vs[0]
    for v in vs[1:] + [None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return parts[0] if len(parts) == 1 else "{" + ",".join(parts) + "}"


def describe(g: GemmEpilogue) -> str:
    """'bias fused, silu unfused' / 'no epilogue'."""
    fused = [o for o in g.fused]
    unfused = [o for o in g.unfused]
    parts = []
    if fused:
        parts.append(", ".join(fused) + " fused")
    if unfused:
        parts.append(", ".join(unfused) + " unfused")
    return "; ".join(parts) if parts else ("no epilogue" if g.verdict == Verdict.NONE.value else g.verdict)


def group_gemms(gemms: Sequence[GemmEpilogue]) -> tuple[tuple[GemmEpilogue, ...], tuple[GemmGroup, ...]]:
    """Group GEMMs of identical layers: module paths equal up to their layer indices, and the same op, shape,
    backend, verdict and fused/unfused ops. A layer that differs in any of those forms a group of its own."""
    buckets: dict[tuple[object, ...], list[GemmEpilogue]] = defaultdict(list)
    order: list[tuple[object, ...]] = []
    for g in gemms:
        if not g.module:
            continue
        pat, idx = _pattern(g.module)
        key: tuple[object, ...] = (pat, len(idx), g.op, g.m, g.n, g.k, g.batch, g.backend, g.verdict, g.fused,
                                   g.unfused, g.prologue)
        if key not in buckets:
            order.append(key)
        buckets[key].append(g)
    groups: list[GemmGroup] = []
    label_of: dict[str, str] = {}
    for key in order:
        members = buckets[key]
        pat = str(key[0])
        indices = [_pattern(m.module)[1] for m in members]
        label = pat
        for pos in range(len(indices[0])):
            label = label.replace("#", _ranges([i[pos] for i in indices]), 1)
        if len(members) == 1:
            label = members[0].module
        first = members[0]
        groups.append(GemmGroup(label=label, count=len(members), members=tuple(m.id for m in members), op=first.op,
                                backend=first.backend, verdict=first.verdict, fused=first.fused,
                                unfused=first.unfused, summary=describe(first)))
        for m in members:
            label_of[m.id] = label
    from dataclasses import replace

    out = tuple(replace(g, group=label_of.get(g.id, "")) for g in gemms)
    return out, tuple(groups)


# ------------------------------------------------------------------------------------------------------------
# Cost of unfused epilogues


def epilogue_cost(instances: dict[tuple[str, float], float], *, total_time_us: float | None,
                  kernels_per_iter: float | None, bytes_per_iter: int | None) -> EpilogueCost | None:
    """``instances``: each kernel launch of one iteration that ran unfused epilogue ops, with its time (a launch
    that served two GEMMs counts once)."""
    if not instances:
        return None
    t = sum(instances.values())
    pct = 100.0 * t / total_time_us if total_time_us else None
    return EpilogueCost(time_us_per_iter=round(t, 3), pct_time=round(pct, 1) if pct is not None else None,
                        kernels=len(instances), of_kernels=int(kernels_per_iter) if kernels_per_iter else None,
                        bytes_per_iter=bytes_per_iter)
