"""The one table of kernel-name patterns: which backend produced a kernel and what category of work it does.

Order matters: the first matching row wins. Each row says why it exists (where the name was seen).
Names come from real traces: ../shared/fixtures (H200, torch 2.11 and 2.14.1) and CPU runs of torch 2.14.1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
NCCL = "NCCL"
C10D = "c10d collectives"
INDUCTOR_CPP = "Inductor C++"
INDUCTOR_CPP_TEMPLATE = "Inductor C++ template"
CPU_BLAS = "MKL/oneDNN"
CPU_ATEN = "ATen CPU"
CUDA_RUNTIME = "CUDA runtime"
OTHER = "other"


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern[str]
    backend: str
    category: str | None  # None: decide the category from the name's verbs (pointwise/reduction)
    why: str


def _r(p: str, backend: str, category: str | None, why: str) -> Rule:
    return Rule(re.compile(p), backend, category, why)


# GPU kernel names.
GPU_RULES: tuple[Rule, ...] = (
    _r(r"^Memset", CUDA_RUNTIME, "memset", "Kineto names memsets 'Memset (Device)'"),
    _r(r"^Memcpy", CUDA_RUNTIME, "memcpy", "Kineto names copies 'Memcpy HtoD (Pageable -> Device)' etc."),
    _r(r"nccl|ncclDevKernel", NCCL, "communication", "NCCL collectives"),
    _r(r"splitKreduce_kernel", CUBLASLT, "gemm", "cuBLASLt split-K reduction: part of the GEMM before it"),
    _r(r"^nvjet_", CUBLASLT, "gemm", "cuBLASLt's Hopper GEMM kernels (nvjet_sm90_...)"),
    _r(r"xmma_(fprop|dgrad|wgrad)_implicit|implicit_gemm|implicit_precomp_gemm", CUDNN, "gemm",
       "cuDNN convolutions (implicit GEMMs): sm80_xmma_fprop_implicit_gemm_* on the H200, torch 2.11"),
    _r(r"^(void )?(cublasLt|cublas)::|^(sm\d+_)?x?gemm|cublas", CUBLAS, "gemm", "cuBLAS/cuBLASLt SASS kernels"),
    _r(r"^(void )?(ampere|sm\d+|volta|turing)_.*(gemm|hgemm|sgemm|s\d+gemm)", CUBLAS, "gemm", "cuBLAS legacy names"),
    _r(r"^kernel_cutlass_", NVGEMM, "gemm", "CuTeDSL kernels from cutlass.operators (what NVGEMM launches)"),
    _r(r"cutlass.*(gemm|Gemm|GEMM)|cutlass3x_|cutlass::device_kernel|cutlass::Kernel", CUTLASS, "gemm",
       "CUTLASS C++ GEMMs (Inductor's CUTLASS backend, or libraries)"),
    _r(r"^nv_universal_gemm", NVGEMM, "gemm", "Inductor's NVGEMM wrapper name"),
    _r(r"^triton_tem_|^triton_(tma|persistent)_", TRITON_TEMPLATE, "gemm", "Inductor Triton GEMM templates"),
    _r(r"^triton_(poi|per|red)_", TRITON, None, "Inductor Triton pointwise/persistent-reduction/reduction"),
    _r(r"^triton_", TRITON, None, "other Triton kernels (before the library rules: an Inductor kernel named after the ATen ops it absorbed, _scaled_dot_product_cudnn_attention included, is still Triton)"),
    _r(r"^cudnn.*(sdpa|flash|attn|attention|fmha)", CUDNN, "attention",
       "cuDNN SDPA: cudnn_generated_fort_native_sdpa_sm90_flash_fprop_* (H200, torch 2.11)"),
    _r(r"cudnn", CUDNN, None, "cuDNN kernels"),
    _r(r"flash|fmha|attention|_attn", FLASH, "attention", "flash / memory-efficient attention"),
    _r(r"at::native::|at_cuda_detail|^(void )?at::", ATEN, None, "ATen's CUDA kernels"),
)

# CPU "kernels": leaf CPU ops and Inductor C++ kernels (with cpp.enable_kernel_profile).
CPU_RULES: tuple[Rule, ...] = (
    _r(r"^(c10d::|c10d_functional::|_c10d_functional::|record_param_comms$|gloo:|nccl:)", C10D, "communication",
       "torch.distributed collectives on the CPU: c10d::allreduce_ (gloo, torch 2.14.1); the collective itself runs "
       "as a gloo:all_reduce range on gloo's thread"),
    _r(r"cpp_CppMicroGemm|cpp_fused_.*_template|cpp_template|^(graph_\d+_)?gemm_m\d+n\d+k\d+|_gemm_kernel$",
       INDUCTOR_CPP_TEMPLATE, "gemm",
       "Inductor's CPU GEMM template (max-autotune with CPP): graph_0_gemm_m32n256k256_kernel, torch 2.14.1"),
    _r(r"^(mkl::|mkldnn::|onednn::|aten::mkldnn_|aten::_mkl|mkl_)", CPU_BLAS, "gemm", "MKL/oneDNN GEMMs"),
    _r(r"^aten::(mm|addmm|bmm|baddbmm|matmul|linear|_addmm_activation|addmv|mv|dot|_scaled_mm)$", CPU_ATEN, "gemm",
       "ATen GEMM ops on the CPU"),
    _r(r"(^|_)cpp_fused_|^graph_\d+_cpp_", INDUCTOR_CPP, None, "Inductor C++ kernels (cpp.enable_kernel_profile)"),
    _r(r"_scaled_dot_product|flash_attention|attention", CPU_ATEN, "attention", "SDPA on the CPU"),
    _r(r"^aten::", CPU_ATEN, None, "other ATen CPU ops"),
)

# ATen's CUDA pointwise kernels; checked before the reduction words ("std::array" must not read as std).
_ELEMENTWISE = re.compile(r"elementwise_kernel|unrolled_elementwise|vectorized_elementwise")
_REDUCTION_WORDS = re.compile(
    r"reduce_kernel|reduction|_red_|_per_|\bsum|mean|amax|amin|softmax|norm|argmax|argmin|cumsum|"
    r"\bvar\b|\bstd\b(?!::)|topk|sort|scan|logsumexp",
    re.IGNORECASE,
)
_TRITON_PW = re.compile(r"^triton_poi_")
_TRITON_RED = re.compile(r"^triton_(per|red)_")
_ATTN = re.compile(r"flash|fmha|attention|sdpa|_attn", re.IGNORECASE)
_GEMM_WORDS = re.compile(r"gemm|matmul|\bmm\b", re.IGNORECASE)


def _category_from_verbs(name: str) -> str:
    if _ELEMENTWISE.search(name):
        return "pointwise"
    if _TRITON_PW.search(name):
        return "pointwise"
    if _TRITON_RED.search(name):
        return "reduction"
    if _ATTN.search(name):
        return "attention"
    if _REDUCTION_WORDS.search(name):
        return "reduction"
    if "elementwise" in name or "_fused_" in name or "pointwise" in name:
        return "pointwise"
    if _GEMM_WORDS.search(name):
        return "gemm"
    return "pointwise" if "at::native::" in name or name.startswith("aten::") else "other"


def classify(name: str, *, on_cpu: bool = False, kernel_backend: str | None = None) -> tuple[str, str]:
    """Return (category, backend) for a kernel name. ``kernel_backend`` is the trace's cpu_op arg, if any."""
    rules = CPU_RULES if on_cpu else GPU_RULES
    for rule in rules:
        if rule.pattern.search(name):
            return (rule.category or _category_from_verbs(name), rule.backend)
    if kernel_backend == "triton":
        return (_category_from_verbs(name), TRITON)
    return (_category_from_verbs(name), OTHER)
