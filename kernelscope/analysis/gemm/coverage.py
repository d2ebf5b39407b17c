"""The coverage self-check: how many of the GEMM-class ops a mode executed were attributed to a kernel.

A GEMM the analysis misses must be visible, not silent (kernel names that do not say GEMM once cost ResNet-50
eager 7 of its 53 convolutions). Every run counts, per mode and for one iteration:

* eager: the GEMM-class CPU ops in the trace, each GEMM once, as the innermost GEMM-class op of its nest
  (vocab.EAGER_GEMM_OPS: aten::linear -> aten::addmm, aten::matmul -> aten::mm / aten::bmm, aten::conv2d -> ... ->
  aten::cudnn_convolution are one GEMM each); attributed when the analysis found the kernel that computed it;
* compiled: every GEMM call site of the output code (extern_kernels.mm / addmm / bmm / convolution, Triton /
  CUTLASS / NVGEMM / C++ templates) once per call of its graph, and the eager GEMM-class ops between compiled
  regions; attributed when the call site's launch was found in the trace.

Across modes (``compare_with_eager``): a compiled mode may count more GEMMs than eager where Inductor made GEMMs
out of another op (SDPA's math decomposition into two bmm's, read from Inductor's provenance); any difference
those decompositions do not explain is said as a warning. Pure functions; no torch import.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any

from kernelscope.analysis.gemm.model import _Counted, _Found
from kernelscope.result import GemmCoverage, GemmEpilogue, GemmOp, ModeResult, Note, Status

EAGER_SOURCE = "trace CPU ops"
CODE_SOURCE = "output code"


def gemm_coverage(found: Sequence[_Found], gemms: Sequence[GemmEpilogue], counted: Sequence[_Counted], *,
                  with_code: bool, modules: Any = None) -> GemmCoverage:
    """One iteration's coverage. ``found`` and ``gemms``: that iteration's GEMMs in the same (launch) order;
    ``counted``: the eager GEMM-class ops it executed (all of eager's, or those between compiled regions).
    (A compiled trace without its output code has none: nothing lists the GEMMs it should have run.)"""
    rows = list(counted)
    decomposed: Counter[str] = Counter()
    if with_code:
        code_rows = []
        for f, g in zip(found, gemms):
            if f.confidence != "code":
                continue
            kind = "convolution" if f.kind == "conv" else f.op
            code_rows.append(_Counted(GemmOp(
                f.site or f.op, kind, g.module, f.site_where, f.m, f.n, f.k, f.batch,
                None if f.attributed else Note("launch-not-found")), f.attributed))
            origin = modules.decomposed_from(f.graph, f.debug_handle) if modules is not None else None
            if origin:
                decomposed[origin] += 1
        rows = code_rows + rows
    decomposed.update(r.decomposed_from for r in counted if r.decomposed_from)
    missing = tuple(r.op for r in rows if not r.attributed)
    return GemmCoverage(
        source=CODE_SOURCE + (f" + {EAGER_SOURCE}" if counted else "") if with_code else EAGER_SOURCE,
        ops=len(rows),
        attributed=sum(r.attributed for r in rows),
        by_kind=dict(sorted(Counter(r.op.kind for r in rows).items())),
        unattributed=missing,
        via_launching_op=dict(sorted(Counter(r.op.kind for r in rows if r.via_op).items())),
        by_name_only=sum(1 for f in found if f.confidence == "trace-only"),
        decomposed=dict(sorted(decomposed.items())),
    )


def compare_with_eager(modes: Sequence[ModeResult]) -> tuple[ModeResult, ...]:
    """Each compiled mode's GEMM count set against eager's (``GemmCoverage.vs_eager``, ``vs_eager_explained``):
    the same count, or a difference the GEMMs Inductor made from other ops explain, is explained; any other
    difference is a warning the reports print."""
    eager = next((m for m in modes if m.name == "eager" and m.status == Status.OK.value), None)
    base = eager.gemm_coverage if eager is not None else None
    if base is None:
        return tuple(modes)
    out = []
    for m in modes:
        c = m.gemm_coverage
        if m is eager or c is None or m.status != Status.OK.value:
            out.append(m)
            continue
        note = versus_eager(base, c)
        out.append(dataclasses.replace(m, gemm_coverage=dataclasses.replace(
            c, vs_eager=note, vs_eager_explained=note.code != "gemm-count-unexplained")))
    return tuple(out)


def versus_eager(eager: GemmCoverage, c: GemmCoverage) -> Note:
    """A mode's GEMM-class op count against eager's, as a Note with both counts and the GEMMs each side made by
    decomposing another op (``decomposed``: op -> GEMMs). The same count is explained, whatever the
    decompositions. A different count is explained when the side with more made at least that many more GEMMs by
    decomposition: an op such as SDPA runs as one fused kernel in one mode and as two bmm's (its math path) in
    another, and a decomposed op may also run as GEMM-class ops of its own on the other side. Otherwise the
    difference less those decompositions (``beyond``) is unexplained: a warning."""
    args: dict[str, Any] = {"ops": c.ops, "eager_ops": eager.ops, "decomposed": dict(c.decomposed),
                            "eager_decomposed": dict(eager.decomposed)}
    diff = c.ops - eager.ops
    if diff == 0:
        return Note("gemm-count-as-eager", args)
    made = sum((c.decomposed if diff > 0 else eager.decomposed).values())
    if abs(diff) <= made:
        return Note("gemm-count-explained", args)
    return Note("gemm-count-unexplained", {**args, "beyond": abs(diff) - made, "kinds": dict(c.by_kind),
                                           "eager_kinds": dict(eager.by_kind)})
