"""The coverage self-check: every GEMM a mode ran in one iteration, attributed to a kernel or said to be missing.

A GEMM the analysis misses must be visible, not silent. What the analysis found is set against an oracle that
reads none of the analysis's own rules for what a GEMM is:

* eager: the capture's dispatch count (capture.json ``dispatch``, a ``TorchDispatchMode`` over one more call):
  the mm / addmm / bmm / baddbmm / _grouped_mm / convolution ops the call dispatched, those dispatched inside
  other ops (a custom op, a fused attention op) included, by kind;
* compiled: the output code's own call sites that compute a matrix product: each kernel whose body runs
  ``tl.dot`` (but attention's), each GEMM template of another kind (CUTLASS, NVGEMM, C++), each extern GEMM call
  (``extern_kernels.mm`` ... ``_grouped_mm``, oneDNN / MKL linear and convolution), once per call of its graph;
  plus, from the dispatch count of the compiled call, the GEMMs it dispatched inside other ops (a custom op runs
  one mm per expert) and the GEMM-class ops it ran between compiled regions.

What the analysis found is read the way it always was (eager: the trace's CPU ops, each GEMM once as the
innermost GEMM-class op of its nest, a grouped GEMM once; compiled: the GEMM call sites it read, the GEMMs it found
inside other calls, and the eager GEMM-class ops between compiled regions), each attributed when its kernel was
found in the trace. An oracle GEMM the analysis did not find is added unattributed, with where it is (a call site
of the code, the op it ran inside), so a GEMM hidden in an unknown op or template fails the check instead of
reading "N of N". Without an oracle (a trace analysed alone, a capture without the dispatch count, a mode run under
CUDA graphs) the check counts what the analysis found, as before.

Across modes (``compare_with_eager``): a compiled mode may count more GEMMs than eager where Inductor made GEMMs
out of another op (SDPA's math decomposition into two bmm's, read from Inductor's provenance) or a custom op runs
them one by one (one mm per expert where eager ran one grouped GEMM), and fewer where eager ran GEMMs inside a
fused op that the compiled mode runs otherwise (nn.MultiheadAttention's ``_native_multi_head_attention``: its
attention's bmm's, where the compiled graph calls SDPA's fused kernel); any difference those decompositions do not
explain is said as a warning. Pure functions; no torch import.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernelscope import vocab
from kernelscope.analysis.gemm.model import _Counted, _Found
from kernelscope.inductor_code import TEMPLATE_KINDS, KernelKind, OutputCode
from kernelscope.result import GemmCoverage, GemmEpilogue, GemmOp, ModeResult, Note, Status

EAGER_SOURCE = "trace CPU ops"
CODE_SOURCE = "output code"
DISPATCH_SOURCE = "dispatch"


@dataclass(frozen=True, slots=True)
class OracleGemm:
    """One GEMM the oracle counted: its kind, and where it is (a call site of the output code, or the op the
    dispatch count saw it inside)."""

    kind: str  # "mm", "bmm", "convolution", "tl.dot", "template", ...
    op: str  # how the coverage names it: the call site ("triton_tem_fused_bmm_3", "extern_kernels.mm"), "aten::mm"
    site: tuple[int, int, int] | None = None  # (region ordinal, code index, launch index) of a code call site
    source: str = ""  # "graph_0.py:123"
    inside: str = ""  # the op the dispatch count saw it dispatched inside
    by: str = ""  # what counted it: "tl.dot", "template", "extern call", "dispatch"


# ------------------------------------------------------------------------------------------------------------
# The oracles


def _dispatch_kind(op: str) -> str:
    """A GEMM-class op's kind as the dispatch count names it (``_convolution`` is a convolution)."""
    return "convolution" if op in ("_convolution", "convolution") else op


def code_oracle(codes: Sequence[OutputCode], regions: Sequence[tuple[int, int]]) -> list[OracleGemm]:
    """The GEMM call sites of the output code, once per call of its graph (``regions``: (ordinal, code index) of
    each call in the iteration), read from the code alone: kernels whose body runs ``tl.dot`` (a fragment that says
    attention, as flex attention's does, is attention's two dots), GEMM template kinds whose bodies are not Triton,
    and extern calls of GEMM ops (vocab.CODE_ORACLE_EXTERNS)."""
    out: list[OracleGemm] = []
    for ordinal, ci in regions:
        code = codes[ci]
        for L in code.launches:
            kind, by = "", ""
            if L.kind == "kernel":
                kd = code.kernel(L.name)
                if kd is None:
                    continue
                if kd.runs_dot:
                    if any(n.aten_op in vocab.ATTENTION_OPS for n in kd.computed):
                        continue
                    kind, by = "tl.dot", "tl.dot"
                elif KernelKind(kd.kind) in TEMPLATE_KINDS and kd.kind != KernelKind.TRITON_TEMPLATE.value:
                    kind, by = "template", "template"
            elif (L.op or "") in vocab.CODE_ORACLE_EXTERNS:
                kind, by = _dispatch_kind(vocab.EXTERN_GEMM_KIND.get(L.op or "", L.op or "")), "extern call"
            if kind:
                out.append(OracleGemm(kind, L.name, (ordinal, ci, L.index), code.where(L.line), by=by))
    return out


def dispatch_oracle(dispatch: Mapping[str, Any]) -> list[OracleGemm]:
    """Eager: the GEMM-class ops one call dispatched (``gemm_ops``) and those dispatched inside other ops
    (``nested``: op -> kind -> count), from capture.json's ``dispatch``; [] when it counted nothing."""
    out: list[OracleGemm] = []
    for op, n in (dispatch.get("gemm_ops") or {}).items():
        out += [OracleGemm(_dispatch_kind(op), f"aten::{op}", by=DISPATCH_SOURCE)] * int(n)
    for outer, kinds in (dispatch.get("nested") or {}).items():
        for op, n in kinds.items():
            out += [OracleGemm(_dispatch_kind(op), f"aten::{op}", inside=outer, by=DISPATCH_SOURCE)] * int(n)
    return out


def compiled_dispatch_oracle(dispatch: Mapping[str, Any], code: Sequence[OracleGemm],
                             gemm_calls: frozenset[str] = frozenset()) -> list[OracleGemm]:
    """What the compiled call's dispatch count adds to the code's own GEMMs: those dispatched inside other ops
    (a custom op's mm's; not inside ``gemm_calls``, the ops of the code's own extern GEMM calls, counted as those
    calls), and the GEMM-class ops beyond the code's extern GEMM calls of the same kind (they ran eagerly, between
    compiled regions)."""
    nested = {op: kinds for op, kinds in (dispatch.get("nested") or {}).items() if op not in gemm_calls}
    out = dispatch_oracle({"nested": nested})
    externs = Counter(g.kind for g in code if g.by == "extern call")
    for op, n in (dispatch.get("gemm_ops") or {}).items():
        kind = _dispatch_kind(op)
        out += [OracleGemm(kind, f"aten::{op}", by=DISPATCH_SOURCE)] * max(0, int(n) - externs[kind])
    return out


def dispatch_counted(dispatch: Mapping[str, Any] | None) -> bool:
    """Whether a capture's dispatch record counted the call (not skipped, not absent)."""
    return bool(dispatch) and not (dispatch or {}).get("skipped")


# ------------------------------------------------------------------------------------------------------------
# The check


def gemm_coverage(found: Sequence[_Found], gemms: Sequence[GemmEpilogue], counted: Sequence[_Counted], *,
                  with_code: bool, modules: Any = None, oracle: Sequence[OracleGemm] | None = None,
                  oracle_source: str = "") -> GemmCoverage:
    """One iteration's coverage. ``found`` and ``gemms``: that iteration's GEMMs in the same (launch) order;
    ``counted``: the eager GEMM-class ops it executed (all of eager's, or those between compiled regions);
    ``oracle``: the GEMMs the oracle counted (None: no oracle ran), read by ``oracle_source``.
    (A compiled trace without its output code has none: nothing lists the GEMMs it should have run.)"""
    rows = list(counted)
    decomposed: Counter[str] = Counter()
    code_rows: list[_Counted] = []
    if with_code:
        for f, g in zip(found, gemms):
            if f.confidence != "code":
                continue
            kind = "convolution" if f.kind == "conv" else f.op
            code_rows.append(_Counted(GemmOp(
                f.site or f.op, kind, g.module, f.site_where, f.m, f.n, f.k, f.batch,
                None if f.attributed else Note("launch-not-found")), f.attributed))
            origin = f.inside or (modules.decomposed_from(f.graph, f.debug_handle) if modules is not None else None)
            if origin:
                decomposed[origin] += 1
        rows = code_rows + rows
    # eager: the GEMMs the call dispatched inside another op that is no GEMM (nn.MultiheadAttention's fused
    # aten::_native_multi_head_attention runs its projections and attention's bmm's; a custom op its mm's), as the
    # dispatch count saw them; compiled modes count those of a custom op's call where they found them (f.inside)
    nested = Counter(g.inside for g in oracle or () if g.inside) if not with_code else Counter()
    decomposed.update(nested)
    inner = {op.split("::")[-1] for op in nested}
    decomposed.update(r.decomposed_from for r in counted if r.decomposed_from and r.decomposed_from not in inner)
    missing: list[_Counted] = []
    if oracle is not None:
        missing = _not_found(oracle, found, counted)
        rows += missing
    source = CODE_SOURCE + (f" + {EAGER_SOURCE}" if counted else "") if with_code else EAGER_SOURCE
    return GemmCoverage(
        source=source,
        ops=len(rows),
        attributed=sum(r.attributed for r in rows),
        by_kind=dict(sorted(Counter(r.op.kind for r in rows).items())),
        unattributed=tuple(r.op for r in rows if not r.attributed),
        via_launching_op=dict(sorted(Counter(r.op.kind for r in rows if r.via_op).items())),
        by_name_only=sum(1 for f in found if f.confidence == "trace-only"),
        decomposed=dict(sorted(decomposed.items())),
        oracle=len(oracle) if oracle is not None else None,
        oracle_source=oracle_source if oracle is not None else "",
        oracle_by_kind=dict(sorted(Counter(g.kind for g in oracle).items())) if oracle is not None else {},
        missing=len(missing),
    )


def _not_found(oracle: Sequence[OracleGemm], found: Sequence[_Found], counted: Sequence[_Counted]
               ) -> list[_Counted]:
    """The oracle's GEMMs the analysis did not find, as unattributed rows: a code call site with no GEMM read
    there; GEMMs dispatched inside an op beyond those found inside it (compiled) and GEMMs of a kind beyond those of
    that kind found (eager, and compiled modes' eager ops between regions)."""
    sites = {(f.key[1], f.key[2], f.key[3]) for f in found if f.confidence == "code" and f.key[0] == "code"}
    inside = Counter((f.inside, "convolution" if f.kind == "conv" else f.op) for f in found if f.inside)
    # what is matched by kind: eager, every GEMM-class op it counted (the profiler records the ops a custom op
    # dispatches among the others); compiled, those between compiled regions
    by_kind = Counter(r.op.kind for r in counted)
    out: list[_Counted] = []
    for g in oracle:
        if g.site is not None:
            if g.site in sites:
                continue
            out.append(_missing(g))
        elif g.inside and inside[(g.inside, g.kind)] > 0:
            inside[(g.inside, g.kind)] -= 1
        else:  # (compiled: one dispatched inside an op that ran eagerly between compiled regions is among those)
            if by_kind[g.kind] > 0:
                by_kind[g.kind] -= 1
                continue
            out.append(_missing(g))
    return out


def _missing(g: OracleGemm) -> _Counted:
    args: dict[str, Any] = {"by": g.by}
    if g.inside:
        args["inside"] = g.inside
    return _Counted(GemmOp(g.op, g.kind, "", g.source, reason=Note("not-found", args)), False)


# ------------------------------------------------------------------------------------------------------------
# Across modes


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
