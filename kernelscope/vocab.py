"""The one vocabulary: which ATen ops are GEMM-class, pointwise, reductions, norms, views, casts; which CPU ops and
profiler ranges are bookkeeping; the kernel-name patterns that say which backend ran a kernel; the names of GEMM
backends; and the backend facts the verdicts rely on. Every path (eager, compiled, trace-only) and every module
(GEMM verdicts, roofline, autotune, kernels) reads them from here, so "is this an epilogue op?" has one answer.
tests/test_vocab.py fails when another module defines its own table of op names or spells a kernel name.

The epilogue rule, in every path: the pointwise ops applied to a GEMM's output, followed through views and
layout ops, up to the first op that is not pointwise (a reduction, a norm, pooling, attention), another GEMM, or
the graph output. Eval-mode batch norm is pointwise (a per-channel affine map) and counts as an epilogue op;
training-mode batch norm, layer/group/RMS norm and softmax reduce and end the chain.

Facts that depend on a version say which torch / CUTLASS version they were seen on (``Fact.seen``, ``Rule.seen``).
No torch import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kernelscope.tolerance import RULE_TORCH

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
    "cudnn_convolution_transpose", "mkldnn_convolution", "_convolution_pointwise", "_nnpack_spatial_convolution",
    "slow_conv2d_forward", "_slow_conv2d_forward", "thnn_conv2d", "miopen_convolution", "convolution_overrideable",
    # ATen's own CUDA convolutions (depthwise, dilated, 3-D) that _convolution calls where cuDNN does not run
    "_conv_depthwise2d", "conv_depthwise3d", "slow_conv_dilated2d", "slow_conv_dilated3d", "slow_conv3d_forward",
    "miopen_depthwise_convolution",
})
GEMM_OPS = MATMUL_OPS | CONV_OPS
# The GEMM-class ops the capture worker's dispatch oracle counts (capture/dispatch.py; the zoo suite's
# count_gemm_ops): ATen ops as a TorchDispatchMode sees them, by overload packet. A mode does not see what an op it
# counted dispatches inside, so ``_convolution`` counts only where it was called without ``convolution`` around it.
DISPATCH_GEMM_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm", "_grouped_mm", "convolution", "_convolution"})
# The extern calls of Inductor's output code that the compiled coverage oracle counts as GEMMs (analysis/gemm/
# coverage.py code_oracle): the dispatch count's ops (the library calls ``extern_kernels.mm`` ... make), and the
# CPU libraries' GEMM entry points the dispatch count cannot see as GEMMs (oneDNN / MKL linear and convolution).
CODE_ORACLE_EXTERNS = DISPATCH_GEMM_OPS | frozenset({
    "bias_addmm", "_addmm_activation", "_scaled_mm", "_int_mm", "_scaled_grouped_mm", "_mkl_linear",
    "_linear_pointwise", "_convolution_pointwise", "_convolution_pointwise_", "qlinear_pointwise",
    "_weight_int8pack_mm", "_weight_int4pack_mm",
})
# An extern call's GEMM as the dispatch count names it, where the two differ (Inductor's ``bias_addmm`` calls
# torch.addmm).
EXTERN_GEMM_KIND = {"bias_addmm": "addmm"}
# GEMMs with a batch dimension: their FLOPs need the batch count.
BATCHED_OPS = frozenset({"bmm", "baddbmm", "_grouped_mm", "_scaled_grouped_mm"})
# Grouped GEMMs: one call runs one GEMM per group (a mixture of experts' experts) and counts as one GEMM, as the
# dispatch oracle counts it; on the GPU one kernel runs them all, on the CPU ATen runs an aten::mm per group inside
# the call (its work, not GEMMs of their own).
GROUPED_GEMM_OPS = frozenset({"_grouped_mm", "_scaled_grouped_mm"})
# GEMMs that take an additive operand (bias or beta * C): applied in the GEMM call or its kernel.
BIAS_OPS = frozenset({"addmm", "bias_addmm", "baddbmm", "_addmm_activation", "addmv"})
# GEMMs whose minimal traffic includes a bias row of N elements (the roofline's byte floor). Not BIAS_OPS: linear
# and oneDNN's packed_linear may carry a bias (counted: N elements against M*K + K*N + M*N), while baddbmm's and
# addmv's additive operand is not one row of N.
BIAS_ROW_OPS = frozenset({"addmm", "bias_addmm", "_addmm_activation", "linear", "packed_linear"})

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
    "_efficient_attention_forward", "_cudnn_attention_forward", "_scaled_dot_product_attention_math",
})
# Everything that ends a chain without being a GEMM.
BOUNDARY_OPS = REDUCTION_OPS | SOFTMAX_OPS | NORM_OPS | POOL_OPS | ATTENTION_OPS | frozenset({
    "embedding", "index_select", "gather", "scatter", "index", "index_put", "nonzero", "masked_select",
})

# Ops that move no data of their own, or only lay it out: followed through, never listed as epilogue ops. A layout
# copy carries its input's values on unchanged: each output element is an input element (or, for pad and cat, a
# constant or another tensor's), so the op that reads its result reads the GEMM's values. Its kernels copy; they are
# not epilogue ops. Indexing by another tensor's values (gather, index_select, index) is not here: it ends a chain.
VIEW_OPS = frozenset({
    # layout copies that rearrange or repeat elements (Swin's window reverse and cyclic shift: permute + clone,
    # roll); Inductor reads them as index arithmetic in the kernel that consumes them
    "roll", "flip", "rot90", "repeat", "tile", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "native_channel_shuffle", "swapaxes", "swapdims", "moveaxis", "diagonal",
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
# Multi-word ATen op names that must not be split at their underscores when reading an Inductor kernel name
# (inductor_code.name_tokens); longest first, so ``native_layer_norm`` wins over ``layer_norm``.
MULTIWORD_OPS: tuple[str, ...] = tuple(sorted((
    "leaky_relu", "clamp_min", "clamp_max", "convert_element_type", "native_layer_norm", "native_group_norm",
    "native_batch_norm", "_native_batch_norm_legit_no_training", "_to_copy", "_unsafe_view", "_addmm_activation",
    "bias_addmm", "_scaled_mm", "_int_mm", "_grouped_mm", "_scaled_grouped_mm", "_mkl_linear", "_linear_pointwise",
    "var_mean", "_softmax", "_log_softmax", "index_put", "index_select", "masked_fill", "logsumexp",
    "_safe_softmax", "gelu_backward", "threshold_backward", "sigmoid_backward", "tanh_backward", "scalar_tensor",
    "full_like", "zeros_like", "ones_like", "empty_like", "where_self", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
    "scaled_dot_product_attention", "flex_attention",
), key=lambda w: -len(w.split("_"))))

# ------------------------------------------------------------------------------------------------------------
# CPU ops and profiler ranges (trace names)

# CPU ops that do no compute of their own: views, metadata, allocation, Dynamo/AOT bookkeeping.
CPU_NO_COMPUTE_OPS = frozenset(
    "aten::" + n
    for n in (
        "as_strided t transpose permute view _unsafe_view reshape _reshape_alias expand expand_as unsqueeze "
        "squeeze slice select narrow detach alias resolve_conj resolve_neg empty empty_strided empty_like "
        "lift_fresh lift_fresh_copy contiguous numpy_T split chunk unbind flatten unflatten view_as "
        "_nested_tensor_from_mask_left_aligned result_type size stride is_nonzero item _local_scalar_dense "
        "set_ unfold movedim moveaxis swapaxes diagonal real imag conj _conj"
    ).split()
)
# Ops that only support another op's work when nested in it (the copy of addmm's bias, a reduction's fill of its
# output, the copy behind .to()): counted once, as the op they serve; on their own (a top-level copy_) they count.
CPU_HELPER_OPS = frozenset("aten::" + n for n in ("copy_", "fill_", "zero_", "to", "_to_copy", "clone", "contiguous"))
# Ops nested in compute ops that move or allocate nothing of their own (a resize_ of a conv's output).
CPU_NESTED_NO_COMPUTE_OPS = frozenset("aten::" + n for n in (
    "resize_", "as_strided_", "_nnpack_available", "_cudnn_rnn_flatten_weight", "is_same_size"))

# Profiler ranges that are bookkeeping, not an op that launches work: Dynamo/AOT wrappers, the graph-call and step
# ranges, the profiler's own. A kernel launched from one is no op's kernel (NVGEMM's cudaLaunchKernelExC).
BOOKKEEPING_RANGE = re.compile(
    r"^(TorchDynamo Cache Lookup|Torch-Compiled Region|Pregraph bytecode|AOTDispatcher|## |ProfilerStep#|"
    r"PyTorch Profiler|CompiledFunction|autograd::)"
)
# ... and, for counting CPU kernels, the training-loop and synchronize ranges as well.
CPU_BOOKKEEPING = re.compile(
    BOOKKEEPING_RANGE.pattern[:-1] + r"|Optimizer\.|enumerate\(DataLoader\)|cudaDeviceSynchronize)"
)
PROFILER_STEP = re.compile(r"^ProfilerStep#\d+$")
GRAPH_CALL = re.compile(r"^## Call CompiledFxGraph .* ##$")  # Inductor's range around one compiled graph's call
# Kernels only Inductor names this way: a trace holding one comes from a compiled mode.
INDUCTOR_KERNEL = re.compile(r"^(triton_|cpp_fused_|cpp_CppMicroGemm|kernel_cpp_)")
# The prefix of an Inductor kernel name before its op names (graph_0_cpp_fused_..., triton_poi_fused_...).
INDUCTOR_KERNEL_PREFIX = re.compile(
    r"^(?:graph_\d+_)?"
    r"(?:triton_(?:poi|per|red|tem|tma|persistent|for|spl)_|cpp_|nv_universal_gemm_|cutlass_|cutedsl_)"
)

# ------------------------------------------------------------------------------------------------------------
# Eager CPU ops as the profiler names them (aten::..., mkl::..., mkldnn::...): the eager path's vocabulary

# The GEMM-class ops of an eager trace, and the level a count of them counts (the coverage self-check, analysis/gemm/
# coverage.py): each GEMM once, as the INNERMOST of these ops in a nest, the op that launches the work. aten::linear
# and aten::matmul are not in the set (they launch nothing themselves: aten::linear -> aten::addmm, aten::matmul ->
# aten::mm / aten::bmm / aten::mv, one GEMM each); the convolution wrappers are, since the innermost one differs by
# path (aten::conv2d -> convolution -> _convolution -> cudnn_convolution on cuDNN, -> _conv_depthwise2d or
# mkldnn_convolution elsewhere), and an outer one with a GEMM-class op inside it is never counted.
EAGER_GEMM_OPS = frozenset("aten::" + n for n in (
    "mm", "addmm", "bmm", "baddbmm", "_addmm_activation", "_scaled_mm", "_int_mm", "_grouped_mm",
    "_scaled_grouped_mm", "addmv", "mv",
)) | frozenset({"mkl::_mkl_linear", "mkldnn::_linear_pointwise"}) | frozenset(
    # convolutions are GEMM-class (implicit GEMMs); the innermost one of aten::conv2d -> convolution ->
    # _convolution -> cudnn_convolution / mkldnn_convolution is the op that launches the work
    "aten::" + n for n in ("convolution", "_convolution", "conv1d", "conv2d", "conv3d", "cudnn_convolution",
                           "mkldnn_convolution", "_nnpack_spatial_convolution", "_slow_conv2d_forward",
                           "slow_conv2d_forward", "thnn_conv2d", "miopen_convolution", "conv_transpose2d",
                           "cudnn_convolution_relu", "cudnn_convolution_add_relu", "cudnn_convolution_transpose",
                           "_conv_depthwise2d", "conv_depthwise3d", "slow_conv_dilated2d", "slow_conv_dilated3d",
                           "slow_conv3d_forward", "miopen_depthwise_convolution")
) | frozenset({"mkldnn::_convolution_pointwise"})
# What a compiled graph's output code counts: every call site that computes a GEMM-class node, once per call of the
# graph: extern_kernels.mm / addmm / bmm / convolution (GEMM_OPS) and the GEMM templates of inductor_code's
# TEMPLATE_KINDS (Triton, CUTLASS, NVGEMM/CuTeDSL, C++). A GEMM that Inductor made out of another op (SDPA's math
# decomposition into two bmm's) counts too: the comparison with eager names those (analysis/gemm/coverage.py).
EAGER_ELEMENTWISE_OPS = frozenset("aten::" + n for n in (
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "relu", "relu_", "gelu", "gelu_", "silu", "silu_",
    "sigmoid", "sigmoid_", "tanh", "tanh_", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "mish", "mish_",
    "clamp", "clamp_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_", "elu", "elu_", "hardswish",
    "hardswish_", "hardsigmoid", "hardsigmoid_", "threshold", "threshold_", "_to_copy", "to", "type_as", "where",
    "maximum", "minimum", "pow", "exp", "softplus", "selu", "celu", "rsub", "neg", "abs", "square", "sqrt", "rsqrt",
    "addcmul", "erf",
))
# Ops that add a GEMM's bias inside a fused ATen call, with other work: nn.MultiheadAttention's fast path
# (aten::_native_multi_head_attention) runs the packed in-projection as a bare mm, then this op adds the bias,
# scales q and splits the heads.
EAGER_BIAS_OPS = frozenset({"aten::_transform_bias_rescale_qkv"})
# Eval-mode dropout returns its input: no work of its own.
CPU_DROPOUT_OPS = frozenset({"aten::dropout", "aten::feature_dropout"})
EAGER_VIEW_OPS = frozenset("aten::" + n for n in VIEW_OPS) | CPU_DROPOUT_OPS

# ------------------------------------------------------------------------------------------------------------
# Kernel-body ops: the op names analysis/gemm/body.py gives the values of a Triton or Inductor C++ kernel body

# Triton calls that only lay data out.
TRITON_VIEW_FNS = frozenset({"broadcast_to", "reshape", "view", "expand_dims", "permute", "trans", "ravel",
                             "join", "split", "interleave"})
# at::vec / std functions in Inductor's C++ kernels -> the body op they compute.
CPP_BODY_OPS = {"max_propagate_nan": "maximum", "clamp_min": "maximum", "max": "maximum", "maximum": "maximum",
                "min_propagate_nan": "minimum", "clamp_max": "minimum", "min": "minimum", "minimum": "minimum",
                "blendv": "where", "exp_u20": "exp", "sigmoid": "sigmoid", "erf": "erf", "exp": "exp",
                "tanh": "tanh", "neg": "neg", "rsqrt": "rsqrt", "sqrt": "sqrt", "reciprocal": "reciprocal",
                "log": "log", "log1p": "log1p", "abs": "abs", "expm1": "expm1", "pow": "pow", "erfc": "erfc"}
# Ops that combine the elements of a pooling window: max_pool's max, avg_pool's sum (divided afterwards).
BODY_WINDOW_OPS = frozenset({"maximum", "minimum", "add"})
BODY_PASS_OPS = frozenset({"cast", "view", "copy"})  # carry a value through unchanged
# Ops whose operands' order says nothing (two elements of a pooling window computed the same way compare equal).
BODY_COMMUTATIVE_OPS = frozenset({"add", "mul", "maximum", "minimum", "and", "or", "xor"})
BODY_NOISE_OPS = BODY_PASS_OPS | frozenset({"load", "const", "index"})  # not a value's primary op
# What a condition that selects by position is made of (``x1 < 1``, ``(x1 >= 1) & (x1 < 197)``: a cat or a pad)
BODY_POSITION_OPS = frozenset({"copy", "const", "ge", "gt", "le", "lt", "eq", "ne", "and", "or", "not"})
# Ops that identify an activation in a body (erf: exact GELU, tanh: GELU-tanh or tanh, sigmoid: SiLU...).
BODY_KEY_OPS = frozenset({"erf", "tanh", "sigmoid", "exp", "maximum", "minimum", "where", "rsqrt", "sqrt"})


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


# ------------------------------------------------------------------------------------------------------------
# Backends and kernel names

# Backends, as shown in reports.
CUBLAS = "cuBLAS"
CUBLASLT = "cuBLASLt"
CUTLASS = "CUTLASS"
NVGEMM = "NVGEMM/CuTeDSL"
TRITON_TEMPLATE = "Triton template"
TRITON = "Triton"
ATEN = "ATen native"
FLASH = "flash attention"
CUDNN = "cuDNN"
MIOPEN = "MIOpen"
NCCL = "NCCL"
C10D = "c10d collectives"
INDUCTOR_CPP = "Inductor C++"
INDUCTOR_CPP_TEMPLATE = "Inductor C++ template"
CPU_BLAS = "MKL/oneDNN"
CPU_ATEN = "ATen CPU"
CUDA_RUNTIME = "CUDA runtime"
OTHER = "other"
# Backends whose GEMM is a library call: Inductor cannot put its own epilogue into them.
VENDOR_BACKENDS = frozenset({CUBLAS, CUBLASLT, CPU_BLAS, CPU_ATEN, ATEN})
# The libraries an ATen autotune choice runs; with cuDNN's convolutions and "ATen" (the choice label of an extern
# GEMM), the backends autotune matching takes for a library GEMM.
LIBRARY_BACKENDS = (CUBLAS, CUBLASLT, CPU_ATEN, CPU_BLAS)
LIBRARY_GEMM_BACKENDS = (*LIBRARY_BACKENDS, CUDNN, "ATen")

# Inductor's max_autotune_gemm_backends names (what --gemm-backends takes).
GEMM_BACKENDS = ("ATEN", "TRITON", "CUTLASS", "NVGEMM", "CPP", "CUTEDSL")
# ... those that produce kernels Inductor can fuse an epilogue into (CK, CKTILE: ROCm).
FUSIBLE_GEMM_BACKENDS = frozenset({"TRITON", "CUTLASS", "NVGEMM", "CPP", "CUTEDSL", "CK", "CKTILE"})
# Requested backend name -> the label of its autotune choices (choice_backend's vocabulary).
CHOICE_LABEL_OF_BACKEND = {"ATEN": "ATen", "TRITON": "Triton", "CUTLASS": "CUTLASS", "NVGEMM": "NVGEMM",
                           "CPP": "C++", "CUTEDSL": "NVGEMM"}


def choice_backend(name: str) -> str:
    """Which backend a printed autotune choice name belongs to (the names Inductor gives its candidates):
    'Triton' | 'NVGEMM' | 'CUTLASS' | 'C++' | 'ATen'."""
    n = name.lower()
    if n.startswith(("triton", "decompose_k")) or "triton" in n or "decompose_k" in n:
        return "Triton"
    # cute_dsl_gemm (torch 2.14.1's CuTeDSL choices) is NVGEMM's family, checked before "cutlass" because
    # NVGEMM's choice names can carry "cutlass" too.
    if "nv_universal" in n or "nvgemm" in n or "cutedsl" in n or "cute_dsl" in n:
        return "NVGEMM"
    if "cutlass" in n:
        return "CUTLASS"
    if n.startswith("cpp") or "cppmicrogemm" in n:
        return "C++"
    return "ATen"  # extern_mm, bias_addmm, addmm, _mkl_linear, ...


@dataclass(frozen=True, slots=True)
class Rule:
    """One kernel-name pattern: the backend it names and the category of work (None: from the name's verbs)."""

    pattern: re.Pattern[str]
    backend: str
    category: str | None
    why: str
    seen: str = ""  # torch / library version and machine the name was seen on, when the name is version-bound


def _r(p: str, backend: str, category: str | None, why: str, seen: str = "") -> Rule:
    return Rule(re.compile(p), backend, category, why, seen)


# cuBLASLt's split-K reduction kernel: part of the GEMM launched before it.
SPLIT_K_REDUCE = "splitKreduce_kernel"


def is_split_k_reduce(kernel_name: str) -> bool:
    return SPLIT_K_REDUCE.removesuffix("_kernel") in kernel_name


_H200_211 = "torch 2.11.0+cu130, H200 (sm_90a), ../shared/fixtures"
_H200_2141 = "torch 2.14.1 + cutlass.operators 0.3.0 / nvidia-cutlass-dsl 4.8.1, H200 (sm_90a), 2026-12-02"
_CPU_2141 = "torch 2.14.1, CPU"

# GPU kernel names. Order matters: the first matching row wins.
GPU_RULES: tuple[Rule, ...] = (
    _r(r"^Memset", CUDA_RUNTIME, "memset", "Kineto names memsets 'Memset (Device)'"),
    _r(r"^Memcpy", CUDA_RUNTIME, "memcpy", "Kineto names copies 'Memcpy HtoD (Pageable -> Device)' etc."),
    _r(r"nccl|ncclDevKernel", NCCL, "communication", "NCCL collectives"),
    _r(SPLIT_K_REDUCE, CUBLASLT, "gemm", "cuBLASLt split-K reduction: part of the GEMM before it", _H200_211),
    _r(r"^nvjet_", CUBLASLT, "gemm", "cuBLASLt's Hopper GEMM kernels (nvjet_sm90_...)", _H200_211),
    _r(r"xmma_(fprop|dgrad|wgrad)_implicit|implicit_gemm|implicit_precomp_gemm", CUDNN, "gemm",
       "cuDNN convolutions (implicit GEMMs): sm80_xmma_fprop_implicit_gemm_*", _H200_211),
    _r(r"^(void )?(cublasLt|cublas)::|^(sm\d+_)?x?gemm|cublas", CUBLAS, "gemm", "cuBLAS/cuBLASLt SASS kernels"),
    _r(r"^(void )?(ampere|sm\d+|volta|turing)_.*(gemm|hgemm|sgemm|s\d+gemm)", CUBLAS, "gemm", "cuBLAS legacy names"),
    _r(r"^kernel_cutlass_", NVGEMM, "gemm", "CuTeDSL kernels from cutlass.operators (what NVGEMM launches)",
       _H200_2141),
    _r(r"cutlass.*(gemm|Gemm|GEMM)|cutlass3x_|cutlass::device_kernel|cutlass::Kernel", CUTLASS, "gemm",
       "CUTLASS C++ GEMMs (Inductor's CUTLASS backend, or libraries)", _H200_211),
    _r(r"^nv_universal_gemm", NVGEMM, "gemm", "Inductor's NVGEMM wrapper name", _H200_2141),
    _r(r"^triton_tem_|^triton_(tma|persistent)_", TRITON_TEMPLATE, "gemm", "Inductor Triton GEMM templates"),
    _r(r"^triton_(poi|per|red)_", TRITON, None, "Inductor Triton pointwise/persistent-reduction/reduction"),
    _r(r"^triton_", TRITON, None, "other Triton kernels (before the library rules: an Inductor kernel named after "
       "the ATen ops it absorbed, _scaled_dot_product_cudnn_attention included, is still Triton)"),
    _r(r"^cudnn.*(sdpa|flash|attn|attention|fmha)", CUDNN, "attention",
       "cuDNN SDPA: cudnn_generated_fort_native_sdpa_sm90_flash_fprop_*", _H200_211),
    _r(r"cudnn", CUDNN, None, "cuDNN kernels"),
    _r(r"flash|fmha|attention|_attn", FLASH, "attention", "flash / memory-efficient attention"),
    _r(r"at::native::|at_cuda_detail|^(void )?at::", ATEN, None, "ATen's CUDA kernels"),
)

# What a GPU kernel computes is decided by the CPU op that launched it (the trace's External id / correlation), and
# by its name only where no op launched it or the vocabulary does not know the op (analysis/kernels.py):
# - a GEMM-class op's kernels compute its GEMM (cuDNN runs convolutions on cutlass__5x_cudnn::Kernel<...fprop...>,
#   conv2d_c1_k1_nhwc_specialized, cuBLAS's cutlass_80_tensorop_*gemm*, nvjet_* or sm90_xmma_gemm_* kernels),
#   except the helpers below (layout transforms, padding) and ATen's own elementwise kernels;
# - a kernel whose name says GEMM but that an op of another known class launched does that op's work (an attention
#   op's GEMM-named kernel is attention).
GEMM_HELPER_RULES: tuple[Rule, ...] = (
    _r(r"nchwToNhwcKernel|nhwcToNchwKernel", CUDNN, "other",
       "cuDNN's layout transforms around an NHWC convolution kernel (cudnn::engines_precompiled::nchwToNhwcKernel)",
       _H200_211),
    _r(r"nhwcAddPaddingKernel", CUDNN, "other",
       "cuDNN pads the channels for its tensor-core kernel (inside one extern_kernels.convolution call)", _H200_211),
    _r(r"kern_precompute_indices", CUDNN, "other", "cuDNN's index precomputation before precomputed_convolve_sgemm",
       _H200_211),
)


def gemm_helper(kernel_name: str) -> Rule | None:
    """The helper row a GEMM-class op's kernel matches (not its GEMM), or None."""
    return next((r for r in GEMM_HELPER_RULES if r.pattern.search(kernel_name)), None)


def launching_op_class(op_name: str) -> str:
    """What the CPU op that launched a kernel says the kernel computes: 'gemm' (a GEMM-class op, its kernels are
    its GEMM unless helpers), a kernel category ('attention', 'reduction', 'pointwise', 'other') for an op the
    vocabulary knows to be no GEMM, or '' where the op says nothing (unknown ops, Inductor's kernel ranges): the
    kernel's name decides."""
    if op_name in EAGER_GEMM_OPS:
        return "gemm"
    if not op_name.startswith("aten::"):
        return ""
    base = op_name[len("aten::"):]
    cls = op_class(base)
    if cls in ("gemm", "conv"):
        return ""  # a GEMM-class wrapper (aten::linear, aten::matmul): its work is in the op nested in it
    if base in ATTENTION_OPS:
        return "attention"
    if cls == "boundary":
        return "reduction" if base not in POOL_OPS else "other"
    if cls in ("pointwise", "cast"):
        return "pointwise"
    if cls == "view":
        return "other"
    return ""


def launching_op_backend(op_name: str) -> str | None:
    """The library a GEMM-class op called when its kernel's name names none (cuDNN's conv2d_c1_k1_nhwc_specialized)."""
    return CUDNN if "cudnn" in op_name else MIOPEN if "miopen" in op_name else None


# CPU "kernels": leaf CPU ops and Inductor C++ kernels (with cpp.enable_kernel_profile).
CPU_RULES: tuple[Rule, ...] = (
    _r(r"^(c10d::|c10d_functional::|_c10d_functional::|record_param_comms$|gloo:|nccl:)", C10D, "communication",
       "torch.distributed collectives on the CPU: c10d::allreduce_ (gloo); the collective itself runs as a "
       "gloo:all_reduce range on gloo's thread", _CPU_2141),
    _r(r"cpp_CppMicroGemm|cpp_fused_.*_template|cpp_template|^(graph_\d+_)?gemm_m\d+n\d+k\d+|_gemm_kernel$",
       INDUCTOR_CPP_TEMPLATE, "gemm",
       "Inductor's CPU GEMM template (max-autotune with CPP): graph_0_gemm_m32n256k256_kernel", _CPU_2141),
    _r(r"^(mkl::|mkldnn::|onednn::|aten::mkldnn_|aten::_mkl|mkl_)", CPU_BLAS, "gemm", "MKL/oneDNN GEMMs"),
    _r(r"^aten::(mm|addmm|bmm|baddbmm|matmul|linear|_addmm_activation|addmv|mv|dot|_scaled_mm|_grouped_mm|"
       r"_scaled_grouped_mm)$", CPU_ATEN, "gemm", "ATen GEMM ops on the CPU"),
    _r(r"(^|_)cpp_fused_|^graph_\d+_cpp_", INDUCTOR_CPP, None, "Inductor C++ kernels (cpp.enable_kernel_profile)",
       _CPU_2141),
    _r(r"_scaled_dot_product|flash_attention|attention", CPU_ATEN, "attention", "SDPA on the CPU"),
    _r(r"^aten::", CPU_ATEN, None, "other ATen CPU ops"),
)

# Verbs in kernel names that say what a kernel without a category of its own does (patterns.classify).
# ATen's CUDA pointwise kernels; checked before the reduction words ("std::array" must not read as std).
ELEMENTWISE_WORDS = re.compile(r"elementwise_kernel|unrolled_elementwise|vectorized_elementwise")
REDUCTION_WORDS = re.compile(
    r"reduce_kernel|reduction|_red_|_per_|\bsum|mean|amax|amin|softmax|norm|argmax|argmin|cumsum|"
    r"\bvar\b|\bstd\b(?!::)|topk|sort|scan|logsumexp",
    re.IGNORECASE,
)
TRITON_POINTWISE_NAME = re.compile(r"^triton_poi_")
TRITON_REDUCTION_NAME = re.compile(r"^triton_(per|red)_")
ATTENTION_WORDS = re.compile(r"flash|fmha|attention|sdpa|_attn", re.IGNORECASE)
GEMM_WORDS = re.compile(r"gemm|matmul|\bmm\b", re.IGNORECASE)

# ATen CUDA functor names -> the op label (trace-only path: a kernel's name is all there is).
ATEN_KERNEL_LABELS: tuple[tuple[re.Pattern[str], str], ...] = (
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
    Fact("torch-accuracy-rule",
         "against the float64 reference a mode passes, per output, when torch.allclose(eager, mode, tol, tol) holds "
         "or rmse(mode) <= multiplier * rmse(eager) + tol/10, multiplier 3 for fp16/bf16 outputs (2 otherwise; 3 "
         "under 1000 elements, for N x C x 1 x 1 outputs and for tol >= 2e-2; 10 when forced): "
         "torch._dynamo.utils.same with fp64_ref, restated in kernelscope/tolerance.py; tol as torch's benchmark "
         "suite passes it for inference (fp32 1e-4, fp16/bf16 1e-3), equal_nan unless float32",
         f"torch {RULE_TORCH} (torch/_dynamo/utils.py same / get_multiplier; benchmarks/dynamo "
         "get_tolerance_and_cosine_flag), read 2026-12-04; tests/test_numerics_rule.py runs the installed torch's "
         "same() on the same tensors"),
)}
