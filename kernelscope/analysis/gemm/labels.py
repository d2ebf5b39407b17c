"""Op labels of the eager and trace-only paths (ATen op names; kernel names only when no code exists).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kernelscope import vocab
from kernelscope.analysis.gemm.model import BIAS_OPS, CAST_OPS, GEMM_OPS, VIEW_OPS
from kernelscope.inductor_code import (
    name_tokens,
)


def _eager_label(name: str, concrete: Sequence[str] | None = None) -> str:
    base = name.split("::")[-1]
    if base.endswith("_") and not base.startswith("_"):
        base = base[:-1]
    if base in CAST_OPS:
        return "cast"
    if base == "gelu" and concrete and any(str(c).strip("'\"") == "tanh" for c in concrete):
        return "gelu-tanh"
    if base in ("clamp_min",):
        return "relu" if concrete and len(concrete) > 1 and str(concrete[1]) in ("0", "0.0") else "clamp_min"
    if base == "threshold":
        return "relu"
    return base


_ATEN_KERNEL_LABELS = vocab.ATEN_KERNEL_LABELS


def pooling_in_name(name: str) -> str | None:
    """The pooling op an Inductor kernel's name lists (``max_pool2d_with_indices``,
    ``_low_memory_max_pool_with_offsets``, ``avg_pool2d``), for the trace-only path that has nothing but names:
    a pooling kernel is pointwise by its launch, yet pooling ends the epilogue (vocab.POOL_OPS)."""
    tail = name.split("fused_", 1)[1] if "fused_" in name else ""
    hits = [op for op in vocab.POOL_OPS if re.search(rf"(?:^|_){re.escape(op.lstrip('_'))}(?:_|$)", tail)]
    return max(hits, key=len) if hits else None


def _without_pool(name: str) -> tuple[str, str | None]:
    """A kernel name without the pooling op it lists (whose words would read as ops: max, pool2d, ...), and that op."""
    pool = pooling_in_name(name)
    if pool:
        name = re.sub(rf"(?<=_){re.escape(pool.lstrip('_'))}(?=_|$)", "", name, count=1)
    return name, pool


def reduction_in_name(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the reductions, norms and softmax an Inductor kernel's name lists, the other ops it lists) for the
    trace-only path: such a kernel ends the epilogue whatever its launch category (``cpp_fused_add_max_0`` is
    pointwise by its name's words). The other ops may run before the reduction (epilogue ops: avg pool's
    BN + add + ReLU) or after it (max_sub_gelu's sub and gelu): a name, sorted by op, does not say which."""
    tokens = name_tokens(_without_pool(name)[0])
    reductions = tuple(t for t in tokens if vocab.op_class(t) == "boundary")
    others = tuple(t for t in tokens if vocab.op_class(t) == "pointwise")
    return reductions, others


def _kernel_name_labels(name: str, *, in_gemm: bool) -> list[str]:
    """Op labels from a kernel's name alone (trace-only): Inductor names list origins; ATen names the functor.
    A pooling op in the name is no label (it ends the chain: pooling_in_name)."""
    name, pool = _without_pool(name)
    tokens = name_tokens(name)
    if pool and not tokens:
        return []
    if tokens:
        out = []
        for t in tokens:
            if t in GEMM_OPS:
                if t in BIAS_OPS:
                    out.append("bias")
                continue
            if t in VIEW_OPS:
                continue
            out.append("cast" if t in CAST_OPS else t)
        return list(dict.fromkeys(out))
    if in_gemm:
        return []
    for rx, label in _ATEN_KERNEL_LABELS:
        if rx.search(name):
            return [label]
    return ["pointwise"]

