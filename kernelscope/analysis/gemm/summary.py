"""The mode-level view of its GEMMs: identical layers grouped, and what unfused epilogues cost.

Pure functions over the per-GEMM verdicts.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace

from kernelscope import fmt
from kernelscope.result import EpilogueCost, GemmEpilogue, GemmGroup, Verdict

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
    parts = []
    if g.fused:
        parts.append(", ".join(g.fused) + " fused")
    if g.unfused:
        parts.append(", ".join(g.unfused) + " unfused")
    return "; ".join(parts) if parts else ("no epilogue" if g.verdict == Verdict.NONE.value else g.verdict)


def _key(g: GemmEpilogue) -> tuple[object, ...]:
    """What GEMMs of one group share: the module pattern (or, without a module path, nothing), op, shape,
    backend, verdict and the fused, unfused and prologue ops."""
    pat, idx = _pattern(g.module) if g.module else ("", ())
    return (pat, len(idx), g.op, g.m, g.n, g.k, g.batch, g.backend, g.verdict, g.fused, g.unfused, g.prologue)


def _ops(ops: tuple[str, ...]) -> str:
    return ", ".join(ops) or "none"


def _difference(g: GemmEpilogue, ref: GemmEpilogue) -> str:
    """'verdict fused (theirs: unfused); unfused none (theirs: mul)': what sets one GEMM apart from another of
    the same module pattern, in the fields that group them."""
    fields = (
        ("op", g.op, ref.op),
        ("shape", fmt.shape(g.m, g.n, g.k, g.batch), fmt.shape(ref.m, ref.n, ref.k, ref.batch)),
        ("backend", g.backend, ref.backend),
        ("verdict", g.verdict, ref.verdict),
        ("fused", _ops(g.fused), _ops(ref.fused)),
        ("unfused", _ops(g.unfused), _ops(ref.unfused)),
        ("prologue", _ops(g.prologue), _ops(ref.prologue)),
    )
    return "; ".join(f"{name} {mine} (theirs: {theirs})" for name, mine, theirs in fields if mine != theirs)


def group_gemms(gemms: Sequence[GemmEpilogue]) -> tuple[tuple[GemmEpilogue, ...], tuple[GemmGroup, ...]]:
    """Every GEMM in one group. GEMMs of identical layers (module paths equal up to their layer indices, and
    the same op, shape, backend, verdict and fused/unfused ops) form one; a layer that differs in any of those
    forms a group of its own, which names the largest group of its pattern (``differs_from``) and how it differs.
    GEMMs without a module path group by op, shape, backend and verdict alone."""
    buckets: dict[tuple[object, ...], list[GemmEpilogue]] = defaultdict(list)
    for g in gemms:
        buckets[_key(g)].append(g)
    # the largest group of each module pattern is the one the others differ from (the first one on a tie)
    largest: dict[str, tuple[object, ...]] = {}
    for key, members in buckets.items():
        pat = str(key[0])
        if pat and (pat not in largest or len(members) > len(buckets[largest[pat]])):
            largest[pat] = key
    labels = {key: _label(members) for key, members in buckets.items()}
    groups: list[GemmGroup] = []
    label_of: dict[str, str] = {}
    for key, members in buckets.items():
        first, pat = members[0], str(key[0])
        ref = largest.get(pat)
        differs = ref is not None and ref != key
        times = [m.time_us_per_iter for m in members if m.time_us_per_iter is not None]
        groups.append(GemmGroup(
            label=labels[key], count=len(members), members=tuple(m.id for m in members), op=first.op,
            backend=first.backend, verdict=first.verdict, fused=first.fused, unfused=first.unfused,
            summary=describe(first), pattern=pat or labels[key],
            differs_from=labels[ref] if differs and ref is not None else "",
            difference=_difference(first, buckets[ref][0]) if differs and ref is not None else "",
            time_us_per_iter=round(sum(times), 3) if times else None))
        for m in members:
            label_of[m.id] = labels[key]
    out = tuple(replace(g, group=label_of.get(g.id, "")) for g in gemms)
    return out, _differing_after_theirs(groups)


def _differing_after_theirs(groups: Sequence[GemmGroup]) -> tuple[GemmGroup, ...]:
    """Groups in launch order, each group that differs right after the one it differs from."""
    after: dict[str, list[GemmGroup]] = defaultdict(list)
    for grp in groups:
        if grp.differs_from:
            after[grp.differs_from].append(grp)
    out: list[GemmGroup] = []
    for grp in groups:
        if not grp.differs_from:
            out += [grp, *after.pop(grp.label, ())]
    return tuple(out) + tuple(grp for rest in after.values() for grp in rest)


def _label(members: Sequence[GemmEpilogue]) -> str:
    """'layers.0-31.mlp.up_proj' for a group (the one module path of a group of one); 'mm 512 × 1024 × 1024' for
    GEMMs without a module path."""
    first = members[0]
    if not first.module:
        return f"{first.op or 'gemm'} {fmt.shape(first.m, first.n, first.k, first.batch)}"
    if len(members) == 1:
        return first.module
    pat, _ = _pattern(first.module)
    indices = [_pattern(m.module)[1] for m in members]
    label = pat
    for pos in range(len(indices[0])):
        label = label.replace("#", _ranges([i[pos] for i in indices]), 1)
    return label


def mode_groups(gemms: Sequence[GemmEpilogue], groups: Sequence[GemmGroup]) -> tuple[GemmGroup, ...]:
    """A mode's groups as the reports show them: the result's own when they hold every GEMM and were written
    with their pattern, else the GEMMs grouped again (a result.json from before every GEMM had a group)."""
    held = {i for grp in groups for i in grp.members}
    if groups and all(grp.pattern for grp in groups) and all(g.id in held for g in gemms):
        return tuple(groups)
    return group_gemms(gemms)[1]


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
