"""Op labels of the eager and trace-only paths (ATen op names; kernel names only when no code exists).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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


_ATEN_KERNEL_LABELS = (
    (re.compile(r"Gelu", re.IGNORECASE), "gelu"),
    (re.compile(r"silu", re.IGNORECASE), "silu"),
    (re.compile(r"sigmoid", re.IGNORECASE), "sigmoid"),
    (re.compile(r"mish", re.IGNORECASE), "mish"),
    (re.compile(r"hardtanh", re.IGNORECASE), "hardtanh"),
    (re.compile(r"leaky_relu", re.IGNORECASE), "leaky_relu"),
    (re.compile(r"tanh", re.IGNORECASE), "tanh"),
    (re.compile(r"clamp|threshold", re.IGNORECASE), "clamp"),
    (re.compile(r"Add|add_kernel", re.IGNORECASE), "add"),
    (re.compile(r"Mul", re.IGNORECASE), "mul"),
    (re.compile(r"Div", re.IGNORECASE), "div"),
    (re.compile(r"copy", re.IGNORECASE), "copy"),
)


def _kernel_name_labels(name: str, *, in_gemm: bool) -> list[str]:
    """Op labels from a kernel's name alone (trace-only): Inductor names list origins; ATen names the functor.
    """
    tokens = name_tokens(name)
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

