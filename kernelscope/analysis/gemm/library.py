"""Library GEMM calls: where their bias and _addmm_activation's activation went (from their kernels), and
M/N/K and dtype from the recorded input sizes (convolutions as implicit GEMMs).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kernelscope import vocab
from kernelscope.analysis.gemm.align import _Group, _TraceIndex
from kernelscope.analysis.gemm.model import BIAS_OPS, EpilogueOp, short_kernel_name
from kernelscope.inductor_code import (
    torch_dtype_name,
)
from kernelscope.result import Evidence
from kernelscope.result import EvidenceRule as Rule
from kernelscope.trace import CpuEvent


def _library_bias(group: _Group | None, tx: _TraceIndex, callee: str) -> EpilogueOp:
    """Where a library GEMM's bias went: cuBLASLt's bias epilogue (``nvjet_*_bias_*``), or a copy of the
    broadcast bias into the output before a beta=1 GEMM. Either way the bias is fused into the GEMM call
    (vocab.FACTS["bias-in-call"]: one reading in every path); the evidence says how, and a copy kernel's time
    counts in the GEMM's time."""
    if group is None:
        return EpilogueOp(
            "bias",
            True,
            callee,
            Evidence.of(Rule.BETA_NOT_TRACED, callee=callee),
        )
    gk = group.gemm_kernels
    with_bias = [k for k in gk if "bias" in k.name.lower()]
    if with_bias:
        return EpilogueOp(
            "bias",
            True,
            with_bias[0].name,
            Evidence.of(Rule.CUBLASLT_BIAS, kernel=short_kernel_name(with_bias[0].name)),
        )
    if tx.ka.device == "cpu":
        # A CPU op's own kernels are its nested ops: aten::addmm -> aten::copy_ (the broadcast bias), then
        # BLAS.
        # (the copy is counted as the GEMM op's work, not as a kernel: look for it in the op tree)
        copies = [k for k in group.kernels if k.name in ("aten::copy_", "aten::expand_copy")] or \
            (tx.nested_copies(group.op) if group.op is not None else [])
    else:
        copies = [k for k in group.compute if k.category != "gemm"]
    if copies:
        return EpilogueOp(
            "bias",
            True,
            copies[0].name,
            Evidence.of(Rule.BIAS_COPY, op=group.name, kernel=short_kernel_name(copies[0].name)),
        )
    return EpilogueOp(
        "bias",
        True,
        gk[0].name if gk else group.name,
        Evidence.of(Rule.BETA_NO_KERNEL, op=group.name),
    )


def _library_activation(group: _Group | None, act: str | None, callee: str) -> EpilogueOp:
    """torch._addmm_activation: cuBLASLt applies GELU/ReLU in its epilogue, or ATen falls back to a separate
    kernel.
    """
    if group is None:
        label = act or "activation"
        return EpilogueOp(
            label,
            True,
            callee,
            Evidence.of(Rule.ADDMM_ACTIVATION_NOT_TRACED, callee=callee, act=label),
        )
    gk = group.gemm_kernels
    if act is None:  # the use_gelu argument is not in this trace: cuBLASLt's kernel name says it
        named = [a for a in ("gelu", "relu") if any(a in k.name.lower() for k in gk)]
        act = named[0] if named else "activation"
    # the fallback's own kernel: the activation (aten::gelu_ on the CPU), not the bias copy before the GEMM
    extra = [k for k in group.compute if k.category == "pointwise" and not re.search(r"copy|fill", k.name)]
    if extra:
        return EpilogueOp(
            act,
            False,
            extra[0].name,
            Evidence.of(Rule.ADDMM_ACTIVATION_FALLBACK, op=group.name, act=act,
                        kernel=short_kernel_name(extra[0].name)),
        )
    shown = tuple(short_kernel_name(k.name) for k in gk) or (group.name,)
    return EpilogueOp(
        act,
        True,
        gk[0].name if gk else group.name,
        Evidence.of(Rule.ADDMM_ACTIVATION_EPILOGUE, op=group.name, act=act, kernels=shown),
    )


def _ints(v: Any) -> list[int] | None:
    if isinstance(v, (list, tuple)) and all(isinstance(x, int) for x in v):
        return list(v)
    if isinstance(v, str):
        xs = re.findall(r"-?\d+", v)
        return [int(x) for x in xs] if xs else None
    return None


def conv_out_shape(e: CpuEvent) -> list[int] | None:
    """A convolution op's output shape from its recorded input sizes and its stride/padding/dilation."""
    dims = [d for d in (e.input_dims or ()) if isinstance(d, list)]
    if len(dims) < 2 or len(dims[0]) < 3 or len(dims[1]) < 3:
        return None
    x, w = dims[0], dims[1]
    ci = list(getattr(e, "concrete_inputs", None) or ())
    base = e.name.split("::")[-1]
    # (input, weight, bias, stride, padding, dilation, ...) for conv2d/convolution/_convolution;
    # (input, weight, padding, stride, dilation, ...) for cudnn_convolution / mkldnn_convolution (bias at 2);
    # (input, weight, kernel_size, bias, stride, padding[, dilation]) for ATen's own CPU kernels (a bf16
    # convolution on the CPU: aten::thnn_conv2d > _slow_conv2d_forward; depthwise and dilated ones); 99: no such
    # argument, the default
    order = {"cudnn_convolution": (3, 2, 4), "mkldnn_convolution": (4, 3, 5), "thnn_conv2d": (4, 5, 99),
             "_slow_conv2d_forward": (4, 5, 99), "slow_conv2d_forward": (4, 5, 99), "slow_conv3d_forward": (4, 5, 99),
             "_conv_depthwise2d": (4, 5, 6), "conv_depthwise3d": (4, 5, 6), "slow_conv_dilated2d": (4, 5, 6),
             "slow_conv_dilated3d": (4, 5, 6)}.get(base, (3, 4, 5))
    nsp = len(x) - 2

    def arg(i: int, default: int) -> list[int]:
        v = _ints(ci[i]) if i < len(ci) else None
        if not v:
            return [default] * nsp
        return v * nsp if len(v) == 1 else v

    stride, pad, dil = arg(order[0], 1), arg(order[1], 0), arg(order[2], 1)
    if len(stride) != nsp or len(pad) != nsp or len(dil) != nsp:
        return None
    sp = [(x[2 + i] + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1) // stride[i] + 1 for i in range(nsp)]
    return [x[0], w[0], *sp]


def _mnk_from_dims(name: str, dims: Sequence[Any] | None, e: CpuEvent | None = None
                   ) -> tuple[int | None, int | None, int | None]:
    if not dims:
        return None, None, None
    shapes = [d for d in dims if isinstance(d, list) and d and all(isinstance(x, int) for x in d)]
    base = name.split("::")[-1]
    if vocab.op_class(base) == "conv" or base == "_convolution_pointwise":
        out = conv_out_shape(e) if e is not None else None
        if out is None or len(shapes) < 2:
            return None, None, None
        w = shapes[1]
        k = 1
        for d in w[1:]:
            k *= d
        m = out[0]
        for d in out[2:]:
            m *= d
        return m, w[0], k
    if base == "_mkl_linear" and len(shapes) >= 3:  # (x, packed weight, original weight [N, K], bias?, batch)
        x, w = shapes[0], shapes[2]
        return x[-2], w[0], x[-1]
    if base in ("linear", "_linear_pointwise") and len(shapes) >= 2:
        x, w = shapes[0], shapes[1]
        return (x[-2] if len(x) >= 2 else 1), w[0], x[-1]
    if base in BIAS_OPS:
        shapes = shapes[1:] if len(shapes) >= 3 else shapes
    mats = [s for s in shapes if len(s) >= 2]
    if len(mats) >= 2:
        a, b = mats[0], mats[1]
        if a[-1] == b[-2]:
            return a[-2], b[-1], a[-1]
        if a[-1] == b[-1]:  # a template's B operand given as the untransposed weight [N, K]
            return a[-2], b[-2], a[-1]
    return None, None, None


def _dtype_from_types(types: Sequence[str] | None, name: str) -> str | None:
    if not types:
        return None
    ts = [t for t in types if t and t not in ("Scalar", "ScalarList", "")]
    if name.split("::")[-1] in BIAS_OPS and len(ts) >= 2:
        return torch_dtype_name(ts[1])
    return torch_dtype_name(ts[0]) if ts else None

