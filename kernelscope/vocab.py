"""The one vocabulary of ops: which ATen ops are GEMM-class, pointwise, reductions, norms, views, casts, and the
backend facts the verdicts rely on. Every path (eager, compiled, trace-only) and every module (GEMM verdicts,
roofline, autotune) reads its op classes from here, so "is this an epilogue op?" has one answer.

The epilogue rule, in every path: the pointwise ops applied to a GEMM's output, followed through views and
layout ops, up to the first op that is not pointwise (a reduction, a norm, pooling, attention), another GEMM, or
the graph output. Eval-mode batch norm is pointwise (a per-channel affine map) and counts as an epilogue op;
training-mode batch norm, layer/group/RMS norm and softmax reduce and end the chain.

Facts that depend on a version say which torch / CUTLASS version they were seen on (``Fact.seen``).
No torch import.
"""

from __future__ import annotations

from dataclasses import dataclass

# GEMM-class ops: matrix multiplies and convolutions (implicit GEMMs), as ATen/FX op names, Inductor extern
# calls and CPU library ops.
MATMUL_OPS = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "_addmm_activation", "bias_addmm", "_scaled_mm", "_int_mm", "_grouped_mm",
    "_scaled_grouped_mm", "_mkl_linear", "_linear_pointwise", "linear", "matmul", "addmv", "mv",
    "qlinear_pointwise", "_weight_int8pack_mm", "_weight_int4pack_mm", "dot",
})
CONV_OPS = frozenset({
    "convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "cudnn_convolution", "cudnn_convolution_relu", "cudnn_convolution_add_relu",
    "mkldnn_convolution", "_convolution_pointwise", "_nnpack_spatial_convolution", "slow_conv2d_forward",
    "_slow_conv2d_forward", "thnn_conv2d", "miopen_convolution", "convolution_overrideable",
})
GEMM_OPS = MATMUL_OPS | CONV_OPS
# GEMMs with a batch dimension: their FLOPs need the batch count.
BATCHED_OPS = frozenset({"bmm", "baddbmm", "_grouped_mm", "_scaled_grouped_mm"})
# GEMMs that take an additive operand (bias or beta * C): applied in the GEMM call or its kernel.
BIAS_OPS = frozenset({"addmm", "bias_addmm", "baddbmm", "_addmm_activation", "addmv"})

# Ops that reduce, normalise (with statistics), pool or attend: they end an epilogue chain.
REDUCTION_OPS = frozenset({
    "sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod", "var", "var_mean", "std", "std_mean",
    "logsumexp", "cumsum", "cumprod", "any", "all", "norm", "linalg_vector_norm", "topk", "sort",
})
SOFTMAX_OPS = frozenset({"_softmax", "_log_softmax", "softmax", "log_softmax", "_safe_softmax",
                         "prepare_softmax_online"})
NORM_OPS = frozenset({
    "native_layer_norm", "native_group_norm", "layer_norm", "group_norm", "rms_norm", "_fused_rms_norm",
    "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_functional", "cudnn_batch_norm",
    "_batch_norm_impl_index", "instance_norm",
})
# Eval-mode batch norm: pointwise, an epilogue op (conv -> BN -> ReLU).
EVAL_NORM_OPS = frozenset({"_native_batch_norm_legit_no_training"})
POOL_OPS = frozenset({
    "max_pool2d", "max_pool2d_with_indices", "_low_memory_max_pool_with_offsets", "_low_memory_max_pool2d_with_offsets",
    "avg_pool2d", "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "max_pool1d", "max_pool3d", "avg_pool1d",
    "avg_pool3d", "adaptive_max_pool2d", "mkldnn_max_pool2d",
})
ATTENTION_OPS = frozenset({
    "scaled_dot_product_attention", "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_fused_attention_overrideable", "flex_attention", "_flash_attention_forward",
    "_efficient_attention_forward",
})
# Everything that ends a chain without being a GEMM.
BOUNDARY_OPS = REDUCTION_OPS | SOFTMAX_OPS | NORM_OPS | POOL_OPS | ATTENTION_OPS | frozenset({
    "embedding", "index_select", "gather", "scatter", "index", "index_put", "nonzero", "masked_select",
})

# Ops that move no data of their own, or only lay it out: followed through, never listed as epilogue ops.
VIEW_OPS = frozenset({
    "view", "_unsafe_view", "reshape", "permute", "t", "transpose", "expand", "squeeze", "unsqueeze", "slice",
    "select", "alias", "as_strided", "clone", "contiguous", "detach", "getitem", "_reshape_alias", "view_as",
    "flatten", "unflatten", "expand_as", "resolve_conj", "resolve_neg", "lift_fresh", "dropout", "feature_dropout",
    "identity", "empty", "empty_like", "empty_strided", "split", "split_with_sizes", "chunk", "unbind", "cat",
    "stack", "narrow", "movedim", "unsafe_split", "unsafe_split_with_sizes", "unfold", "pad", "constant_pad_nd",
    "copy", "copy_", "_to_copy_view", "lift_fresh_copy", "masked_fill_mask", "view_as_real", "view_as_complex",
})
CAST_OPS = frozenset({"convert_element_type", "_to_copy", "to", "type_as", "_autocast_to_reduced_precision",
                      "_autocast_to_full_precision"})
# Pointwise ops (ATen names, eager op names without the aten:: prefix and trailing underscore).
POINTWISE_OPS = frozenset({
    "add", "sub", "mul", "div", "relu", "gelu", "silu", "sigmoid", "tanh", "hardtanh", "leaky_relu", "mish", "clamp",
    "clamp_min", "clamp_max", "elu", "hardswish", "hardsigmoid", "threshold", "where", "maximum", "minimum", "pow",
    "exp", "softplus", "selu", "celu", "rsub", "neg", "abs", "square", "sqrt", "rsqrt", "addcmul", "addcdiv", "erf",
    "log", "log1p", "expm1", "reciprocal", "sign", "floor", "ceil", "round", "trunc", "fmod", "remainder", "lerp",
    "logical_not", "bitwise_not", "sin", "cos", "prelu", "rrelu", "glu", "gelu_backward", "threshold_backward",
    "sigmoid_backward", "tanh_backward", "masked_fill", "fill", "eq", "ne", "gt", "lt", "ge", "le", "hardshrink",
    "softshrink", "tanhshrink", "logit", "erfc", "exp2", "scalar_tensor",
}) | CAST_OPS | EVAL_NORM_OPS | frozenset({"batch_norm"})
# Activation labels the verdicts use (after recognising decomposed forms in kernel bodies).
ACTIVATIONS = frozenset({"relu", "gelu", "gelu-tanh", "silu", "sigmoid", "tanh", "hardtanh", "leaky_relu", "mish",
                         "elu", "hardswish", "hardsigmoid", "softplus", "clamp"})


def op_class(op: str) -> str:
    """'gemm' | 'conv' | 'boundary' | 'view' | 'cast' | 'pointwise' | 'unknown' for an ATen/FX op name."""
    base = op.split("::")[-1].split(".")[0]
    if base.endswith("_") and not base.startswith("_") and base[:-1] in POINTWISE_OPS | VIEW_OPS:
        base = base[:-1]
    if base in CONV_OPS:
        return "conv"
    if base in MATMUL_OPS:
        return "gemm"
    if base in BOUNDARY_OPS:
        return "boundary"
    if base in CAST_OPS:
        return "cast"
    if base in VIEW_OPS:
        return "view"
    if base in POINTWISE_OPS:
        return "pointwise"
    return "unknown"


def is_gemm(op: str) -> bool:
    return op_class(op) in ("gemm", "conv")


@dataclass(frozen=True, slots=True)
class Fact:
    """A backend fact the verdicts state, with where it was seen."""

    key: str
    text: str
    seen: str  # torch / library version and machine it was observed on


FACTS: dict[str, Fact] = {f.key: f for f in (
    Fact("nvgemm-sm90-no-epilogue",
         "cutlass.operators has no epilogue-fusion-capable operator for SM90 (those target SM100): NVGEMM runs "
         "the plain GEMM and leaves the epilogue to a separate kernel",
         "torch 2.14.1 + cutlass.operators 0.3.0 / nvidia-cutlass-dsl 4.8.1, H200 (sm_90a), 2026-12-02"),
    Fact("nvgemm-sm90-no-addmm",
         "NVGEMM offers no choice for addmm on SM90: a bias needs an epilogue-capable operator",
         "torch 2.14.1 + cutlass.operators 0.3.0, H200, 2026-12-02 (NoValidChoicesError with NVGEMM alone)"),
    Fact("nvgemm-arch",
         "without CUTE_DSL_ARCH the autotune workers compile NVGEMM choices for sm_100a and every choice fails",
         "torch 2.14.1, H200, 2026-12-02 ('expects arch to be sm_90a, but got sm_100a')"),
    Fact("cutlass-cpp-no-evt",
         "Inductor's CUTLASS C++ GEMM carries no epilogue unless CUTLASS_EPILOGUE_FUSION=1 (EVT)",
         "torch 2.11.0+cu130, H200, 2026-11 (sbr-cutlass-noevt fixture)"),
    Fact("library-gemm",
         "a library GEMM call (cuBLAS/cuBLASLt, MKL/oneDNN) cannot take an Inductor epilogue; it takes a bias (or "
         "beta * C), and through torch._addmm_activation a GELU/ReLU (cuBLASLt), or oneDNN post-ops on the CPU",
         "torch 2.11 (H200) and 2.14.1 (CPU)"),
    Fact("cpp-template-freezing",
         "Inductor's C++ GEMM template needs constant weights (freezing=True)",
         "torch 2.14.1, CPU"),
    Fact("bias-in-call",
         "a bias taken by the GEMM op (addmm, baddbmm, linear with bias, _mkl_linear, oneDNN linear/conv) counts as "
         "fused into the GEMM call, whatever the library does inside: cuBLASLt's bias epilogue, or a copy of the "
         "broadcast bias into the output that the GEMM then accumulates onto (beta=1; the copy's time is counted "
         "in the GEMM's time)",
         "kernelscope's reading, the same in every path"),
)}
