"""Which backend produced a kernel and what category of work it does, from its name.

The patterns are kernelscope/vocab.py's ``GPU_RULES`` and ``CPU_RULES`` (one table: the first matching row wins;
each row says where the name was seen). The backend labels are re-exported here for the modules that name them.
"""

from __future__ import annotations

from kernelscope.vocab import (
    ATEN,
    ATTENTION_WORDS,
    C10D,
    CPU_ATEN,
    CPU_BLAS,
    CPU_RULES,
    CUBLAS,
    CUBLASLT,
    CUDA_RUNTIME,
    CUDNN,
    CUTLASS,
    ELEMENTWISE_WORDS,
    FLASH,
    GEMM_WORDS,
    GPU_RULES,
    INDUCTOR_CPP,
    INDUCTOR_CPP_TEMPLATE,
    NCCL,
    NVGEMM,
    OTHER,
    REDUCTION_WORDS,
    TRITON,
    TRITON_POINTWISE_NAME,
    TRITON_REDUCTION_NAME,
    TRITON_TEMPLATE,
    Rule,
)

# The backend labels and rules are re-exported: modules name them as patterns.NVGEMM etc.
__all__ = [
    "ATEN",
    "C10D",
    "CPU_ATEN",
    "CPU_BLAS",
    "CPU_RULES",
    "CUBLAS",
    "CUBLASLT",
    "CUDA_RUNTIME",
    "CUDNN",
    "CUTLASS",
    "FLASH",
    "GPU_RULES",
    "INDUCTOR_CPP",
    "INDUCTOR_CPP_TEMPLATE",
    "NCCL",
    "NVGEMM",
    "OTHER",
    "TRITON",
    "TRITON_TEMPLATE",
    "Rule",
    "classify",
]


def _category_from_verbs(name: str) -> str:
    if ELEMENTWISE_WORDS.search(name):
        return "pointwise"
    if TRITON_POINTWISE_NAME.search(name):
        return "pointwise"
    if TRITON_REDUCTION_NAME.search(name):
        return "reduction"
    if ATTENTION_WORDS.search(name):
        return "attention"
    if REDUCTION_WORDS.search(name):
        return "reduction"
    if "elementwise" in name or "_fused_" in name or "pointwise" in name:
        return "pointwise"
    if GEMM_WORDS.search(name):
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
