"""A compiled trace without its code (confidence "trace-only"): kernel sequences and Inductor kernel names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelscope import vocab
from kernelscope.analysis import patterns
from kernelscope.analysis.gemm.align import _Group, _groups, _TraceIndex
from kernelscope.analysis.gemm.labels import _kernel_name_labels, pooling_in_name, reduction_in_name
from kernelscope.analysis.gemm.library import _dtype_from_types, _library_bias, _mnk_from_dims
from kernelscope.analysis.gemm.model import (
    _CPP_GEMM_NAME,
    BIAS_OPS,
    GEMM_OPS,
    EpilogueOp,
    _Config,
    _Found,
    _norm_op,
    short_kernel_name,
    split_k_evidence,
)
from kernelscope.analysis.gemm.whynot import _why_from_trace
from kernelscope.analysis.kernels import KernelInstance
from kernelscope.inductor_code import (
    name_tokens,
)
from kernelscope.result import Evidence
from kernelscope.result import EvidenceRule as Rule


def _trace_only(
    tx: _TraceIndex, cfg: _Config, it: int, skip: set[tuple[str, float]] | None = None
) -> list[_Found]:
    """The GEMMs of iteration ``it`` read from its kernels' names and order; ``skip``: kernels (name, start)
    another path has read."""
    groups = _groups(tx.ka.iteration(it), tx)
    found: list[_Found] = []
    i = 0
    while i < len(groups):
        g = groups[i]
        gk = g.gemm_kernels
        if not gk or (skip and any((kk.name, kk.ts) in skip for kk in gk)):
            i += 1
            continue
        i, gk = _with_split_k(groups, i, gk)
        ops, evidence = _in_kernel_ops(tx, g, gk)
        after, stops, j = _kernels_after(groups, i)
        found.append(_trace_found(g, gk, cfg, len(found), ops + after, evidence + stops))
        i = j
    return found


def _with_split_k(groups: Sequence[_Group], i: int, gk: tuple[KernelInstance, ...]
                  ) -> tuple[int, tuple[KernelInstance, ...]]:
    """The GEMM's kernels with the split-K reduces launched on their own after it (they belong to it), and the
    index of the last group they take."""
    while (
        i + 1 < len(groups)
        and groups[i + 1].compute
        and all(vocab.is_split_k_reduce(kk.name) for kk in groups[i + 1].compute)
    ):
        i += 1
        gk = gk + groups[i].compute
    return i, gk


def _in_kernel_ops(tx: _TraceIndex, g: _Group, gk: tuple[KernelInstance, ...]
                   ) -> tuple[list[EpilogueOp], list[Evidence]]:
    """The ops the GEMM's own call applies (a library bias) or its kernel's name lists, with the evidence that
    says what the verdict is read from."""
    first = gk[0]
    evidence = [Evidence.of(Rule.TRACE_ONLY_KERNELS, kernels=tuple(short_kernel_name(k.name) for k in gk))]
    if any(vocab.is_split_k_reduce(k.name) for k in gk):
        evidence.append(split_k_evidence())
    ops: list[EpilogueOp] = []
    op_name = g.op.name if g.op is not None else first.name
    if op_name.split("::")[-1] in BIAS_OPS:
        ops.append(_library_bias(g, tx, op_name))
    for label in _kernel_name_labels(first.name, in_gemm=True):
        if label == "bias" and any(o.label == "bias" for o in ops):
            continue
        ops.append(
            EpilogueOp(
                label,
                True,
                first.name,
                Evidence.of(Rule.TRACE_ONLY_IN_NAME, op=label, kernel=first.name),
            )
        )
    if not ops and any("bias" in k.name.lower() for k in gk):
        ops.append(_library_bias(g, tx, op_name))
    return ops, evidence


def _kernels_after(groups: Sequence[_Group], i: int) -> tuple[list[EpilogueOp], list[Evidence], int]:
    """The unfused ops the pointwise kernels after GEMM group ``i`` list in their names, up to a kernel that ends
    the chain (a reduction, pooling, anything not pointwise), with the evidence of where it ended, and the index of
    the first group past the chain."""
    ops: list[EpilogueOp] = []
    evidence: list[Evidence] = []
    j = i + 1
    while j < len(groups):
        h = groups[j]
        comp = h.compute
        if not comp:
            j += 1
            continue
        ends = [(kk, reduction_in_name(kk.name)) for kk in comp]
        end = next(((kk, r) for kk, r in ends if r[0] or kk.category != "pointwise"), None)
        if end is not None:
            kk, (reductions, others) = end
            evidence.append(Evidence.of(Rule.TRACE_ONLY_STOP, kernel=kk.name, category=str(kk.category),
                                        reductions=tuple(reductions), others=tuple(others)))
            break
        for kk in comp:
            for label in _kernel_name_labels(kk.name, in_gemm=False):
                ops.append(
                    EpilogueOp(
                        label,
                        False,
                        kk.name,
                        Evidence.of(Rule.TRACE_ONLY_SEPARATE, kernel=short_kernel_name(kk.name), op=label),
                        ((kk.name, kk.ts),),
                        kk.dur,
                    )
                )
        pool = next((p for p in (pooling_in_name(kk.name) for kk in comp) if p), None)
        if pool:
            evidence.append(Evidence.of(Rule.TRACE_ONLY_POOLING, kernel=comp[0].name, pool=pool))
            j += 1
            break
        j += 1
    return ops, evidence, j


def _trace_found(g: _Group, gk: tuple[KernelInstance, ...], cfg: _Config, index: int, ops: list[EpilogueOp],
                 evidence: list[Evidence]) -> _Found:
    """The GEMM's record: its op and shape from the launching op's Input Dims or the kernel's name, whether the
    name can say what it fused, and the why-not (``index``: its place in the iteration)."""
    first = gk[0]
    op_name = g.op.name if g.op is not None else first.name
    base = op_name.split("::")[-1]
    dims_op = g.op
    m, n, k = (
        _mnk_from_dims(dims_op.name, dims_op.input_dims) if dims_op is not None else (None, None, None)
    )
    if m is None and dims_op is not None and dims_op.input_dims and first.name.startswith("triton_"):
        m, n, k = _mnk_template(dims_op.input_dims)
    cpp = _CPP_GEMM_NAME.search(first.name)
    if m is None and cpp:
        m, n, k = (int(x) for x in cpp.groups())
    gemm_tokens = [t for t in name_tokens(first.name) if t in GEMM_OPS]
    if base not in GEMM_OPS and gemm_tokens:
        base = _norm_op(gemm_tokens[0])
    opaque = first.backend in (
        patterns.INDUCTOR_CPP_TEMPLATE,
        patterns.NVGEMM,
        patterns.CUTLASS,
    ) and not name_tokens(first.name)
    dtype = _dtype_from_types(dims_op.input_types, dims_op.name) if dims_op is not None else None
    backend = first.backend
    why, more = _why_from_trace(backend, ops, cfg, op=base, m=m, n=n, k=k)
    return _Found(
        key=("trace", index),
        op=base if base in GEMM_OPS else "",
        kernels=tuple(kk.name for kk in gk),
        backend=backend,
        m=m,
        n=n,
        k=k,
        dtype=dtype,
        time_us=sum(kk.dur for kk in gk),
        ops=tuple(ops),
        evidence=tuple(evidence + more),
        why_not=tuple(why),
        confidence="trace-only",
        order=g.start,
        opaque=opaque,
    )


def _mnk_template(dims: Sequence[Any]) -> tuple[int | None, int | None, int | None]:
    """M, N, K from a Triton template launch's Input Dims: (bias?, A[M,K], B[N,K] or [K,N], out[M,N])."""
    shapes = [d for d in dims if isinstance(d, list) and len(d) == 2 and all(isinstance(x, int) for x in d)]
    if len(shapes) >= 3:
        a, out = shapes[0], shapes[-1]
        return out[0], out[1], a[1]
    return None, None, None

