"""The GEMMs of two runs paired one to one (``compare`` base -> head, ``upgrade-check`` before -> after).

A GEMM's id means nothing across runs; ``match_gemms`` pairs them by what survives a change of version or shape:
the module path and shape, the op and shape, the shape alone (an upgrade may turn an addmm into mm + a fused
bias), and, when a shape parameter changed, the module or the nth GEMM of an op both runs launch equally often.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.result import GemmEpilogue


@dataclass(frozen=True, slots=True)
class GemmPair:
    """One GEMM before and after, or present on one side only."""

    label: str  # the module path when known, else "op M × N × K"
    matched_by: str  # "module" | "op" | "shape" | "module, new shape" | "order, new shape" | "" (one side only)
    before: GemmEpilogue | None
    after: GemmEpilogue | None
    gained: tuple[str, ...]  # epilogue ops fused after that were not before
    lost: tuple[str, ...]  # ops fused before that are not after

    @property
    def change(self) -> str:
        b, a = self.before, self.after
        return change_kind(b, a, self.gained, self.lost, b is not None and a is not None and b.backend != a.backend)

    @property
    def time_us(self) -> float:
        return max((g.time_us_per_iter or 0.0) for g in (self.before, self.after) if g is not None)


def _shape(g: GemmEpilogue) -> tuple[int | None, ...]:
    return (g.m, g.n, g.k, g.batch)


def match_gemms(before: Sequence[GemmEpilogue], after: Sequence[GemmEpilogue]) -> tuple[GemmPair, ...]:
    """Pair GEMMs across the two runs. Per-run ids mean nothing across runs; in order of preference a pair shares
    the module path and shape (the engine knows the module), the aten op and shape, or the shape alone (the new
    version may lower the same nn.Linear to mm + fused bias instead of addmm). Within a key, the nth matches
    the nth."""
    pairs: dict[int, tuple[int, str]] = {}  # after index -> (before index, how)
    used: set[int] = set()

    def same_count(op: str) -> bool:  # the op's GEMMs line up one to one: only their shapes changed
        return sum(g.op == op for g in before) == sum(g.op == op for g in after)

    keys: tuple[tuple[str, Callable[[GemmEpilogue], Hashable | None]], ...] = (
        ("module", lambda g: (g.module, *_shape(g)) if g.module else None),
        ("op", lambda g: (g.op, *_shape(g))),
        ("shape", _shape),
        # a shape parameter changed between the runs (batch 32 vs 4): the same module, or the nth GEMM of an op
        # that both runs launch equally often, at its new shape
        ("module, new shape", lambda g: (g.module,) if g.module else None),
        ("order, new shape", lambda g: (g.op,) if g.op and same_count(g.op) else None),
    )
    for how, key in keys:
        for ai, ga in enumerate(after):
            ka = key(ga)
            if ai in pairs or ka is None:
                continue
            bi = next((i for i, gb in enumerate(before) if i not in used and key(gb) == ka), None)
            if bi is not None:
                pairs[ai] = (bi, how)
                used.add(bi)
    by_before = {bi: (ai, how) for ai, (bi, how) in pairs.items()}
    rows: list[GemmPair] = []
    for bi, gb in enumerate(before):
        if bi in by_before:
            ai, how = by_before[bi]
            ga = after[ai]
            rows.append(GemmPair(_label(ga, gb), how, gb, ga, tuple(o for o in ga.fused if o not in gb.fused),
                                 tuple(o for o in gb.fused if o not in ga.fused)))
        else:
            rows.append(GemmPair(_label(gb), "", gb, None, (), ()))
    rows += [GemmPair(_label(ga), "", None, ga, (), ()) for ai, ga in enumerate(after) if ai not in pairs]
    return tuple(rows)


def _label(g: GemmEpilogue, other: GemmEpilogue | None = None) -> str:
    module = g.module or (other.module if other else "")
    if module:
        return module
    op = g.op or (other.op if other else "") or "gemm"
    if other is not None and other.op and g.op and other.op != g.op:
        op = f"{other.op} → {g.op}"  # matched by shape: the new version lowered it differently
    return f"{op} {fmt.shape(g.m, g.n, g.k, g.batch)}"


def change_kind(before: GemmEpilogue | None, after: GemmEpilogue | None, gained: Sequence[str], lost: Sequence[str],
                backend_switched: bool) -> str:
    """What happened to one GEMM between two runs (compare's base/head, upgrade-check's before/after)."""
    if before is None:
        return "new GEMM"
    if after is None:
        return "GEMM gone"
    if gained and not lost:
        return "fusion gained"
    if lost and not gained:
        return "fusion lost"
    if gained or lost:
        return "fusion changed"
    if before.verdict != after.verdict:
        return "verdict changed"
    return "backend switched" if backend_switched else "same"
