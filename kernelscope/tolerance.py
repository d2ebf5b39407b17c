"""The one numerics tolerance table and the pass rule against the high-precision reference. Pure: no torch.

A base module: the capture worker counts mismatches with ``tolerance_for`` and judges each output against the
float64 reference with ``reference_multiplier`` / ``reference_pass`` (torch's own accuracy rule, restated here
without torch); the analysis layer (analysis/numerics.py) and the reports read the same table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The torch whose accuracy checker this module restates: torch/_dynamo/utils.py ``same(ref, res, fp64_ref, tol=...)``
# and its inner ``get_multiplier``, read in torch 2.14.1. vocab.FACTS["torch-accuracy-rule"] states it with where it
# was read; tests/test_numerics_rule.py runs torch's own same() on the same tensors as the worker's rule (an
# independent oracle), so a torch that changes the rule fails that test.
RULE_TORCH = "2.14.1"
RULE_NAME = f"torch._dynamo.utils.same (torch {RULE_TORCH})"


@dataclass(frozen=True, slots=True)
class Tolerance:
    """``atol``/``rtol``: a mode's output against eager's, element by element (the Modes table's "vs eager").
    ``same_tol``: the ``tol`` argument of torch's accuracy rule against the float64 reference, as torch's benchmark
    suite passes it for inference in this dtype (its allclose shortcut and the ``tol/10`` slack of the rmse bound)."""

    dtype: str
    atol: float
    rtol: float
    same_tol: float = 1e-4


# A compiled mode's output vs eager's, for the run's dtype. These are looser than torch.testing's defaults on
# purpose: Inductor reorders reductions (a K=4096 dot product summed in another order, a fused epilogue that skips
# a rounding to the storage dtype), which moves results by a few units in the last place of the dtype. Each row
# allows roughly 8-16 ulp near 1.0 (fp16 ulp 9.8e-4, bf16 7.8e-3, fp32 1.2e-7), the scale at which the H200
# fixtures differ (seed max-autotune, fp16: max abs error 1.46e-3, one ulp at 1-2). fp32 assumes TF32 is off, as
# it is by default for matmuls.
# same_tol: torch's benchmark suite (benchmarks/dynamo/*.py get_tolerance_and_cosine_flag, inference): torchbench
# 1e-4 by default and 1e-3 under --float16/--amp; Hugging Face and timm models 1e-3; models it lists as needing more
# get 1e-2 (higher_fp16 / higher_bf16) up to 8e-2. kernelscope takes the default of each dtype: fp32 1e-4,
# fp16 and bf16 1e-3 (float64 runs have no suite default: its element-wise row).
TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance("float64", atol=1e-7, rtol=1e-7, same_tol=1e-7),
    "float32": Tolerance("float32", atol=1e-4, rtol=1e-4, same_tol=1e-4),
    "float16": Tolerance("float16", atol=1e-2, rtol=1e-2, same_tol=1e-3),
    "bfloat16": Tolerance("bfloat16", atol=6e-2, rtol=6e-2, same_tol=1e-3),
}
DEFAULT_TOLERANCE_DTYPE = "float32"  # also used for int/fp8/unknown dtypes, where the run did not say
LOW_PRECISION = ("float16", "bfloat16")

# "Close to failing": a mode whose rmse against the reference is at least this many times eager's (within torch's
# allowance of 3x for fp16/bf16). The report then says how to tell Inductor's higher-precision intermediates
# from an error (analysis/numerics.py).
CLOSE_RATIO = 1.5


def dtype_name(dtype: str | None) -> str:
    """"torch.float16", "fp16", "half" -> "float16"; unknown names come back lower-cased."""
    name = (dtype or "").removeprefix("torch.").lower()
    return {"fp64": "float64", "double": "float64", "fp32": "float32", "float": "float32", "fp16": "float16",
            "half": "float16", "bf16": "bfloat16"}.get(name, name)


def tolerance_for(dtype: str | None) -> Tolerance:
    """The tolerance row for a dtype name ("float16", "torch.float16", "fp16", "half", ...)."""
    return TOLERANCES.get(dtype_name(dtype), TOLERANCES[DEFAULT_TOLERANCE_DTYPE])


def equal_nan_for(dtype: str | None) -> bool:
    """torch's benchmark suite compares with ``equal_nan=True`` unless it runs in float32 (``--float32``)."""
    return tolerance_for(dtype).dtype != "float32"


# Against the high-precision reference a mode is judged relative to eager in the same dtype, by PyTorch's own
# accuracy checker: torch._dynamo.utils.same(ref=eager, res=mode, fp64_ref=reference, tol=same_tol), per output
# tensor. It passes when torch.allclose(eager, mode, atol=tol, rtol=tol, equal_nan) holds, or when
# rmse(reference, mode) <= multiplier * rmse(reference, eager) + tol / 10. A deep fp16 model is far from the float64
# answer in eager too; what matters is that compiling did not make it markedly worse.
def reference_multiplier(out_dtype: str | None, numel: int, shape: tuple[int, ...] | list[int], tol: float, *,
                         larger_for_small: bool = False, force_max: bool = False) -> float:
    """torch 2.14.1's ``get_multiplier`` inside ``same``: 10 when forced (the suite forces it for freezing + bf16 +
    binary-folded convolutions), 3 for fp16/bf16 results else 2; with ``use_larger_multiplier_for_smaller_tensor``
    (a per-model opt-in of the suite) 10 for <= 10 elements and 8 for <= 500; 3 for fewer than 1000 elements, for
    4-d outputs whose last two sizes are 1 (1x1 maps: noisy under AMP), or when tol >= 2e-2."""
    if force_max:
        return 10.0
    multiplier = 3.0 if dtype_name(out_dtype) in LOW_PRECISION else 2.0
    dims = tuple(shape)
    if larger_for_small and numel <= 10:
        multiplier = 10.0
    elif larger_for_small and numel <= 500:
        multiplier = 8.0
    elif numel < 1000 or (len(dims) == 4 and dims[-1] == dims[-2] == 1) or tol >= 2 * 1e-2:
        multiplier = 3.0
    return multiplier


def reference_bound(eager_rmse: float | None, multiplier: float, tol: float) -> float | None:
    """The largest rmse against the reference that still passes: multiplier * eager's + tol / 10."""
    if eager_rmse is None:
        return None
    return multiplier * eager_rmse + tol / 10.0


def reference_pass(*, allclose_eager: bool, nan_corner: bool, mode_rmse: float, eager_rmse: float,
                   multiplier: float, tol: float, equal_nan: bool) -> bool:
    """One floating output's verdict by torch 2.14.1's ``same(eager, mode, fp64_ref, tol)``.

    ``allclose_eager``: torch.allclose(eager, mode, atol=tol, rtol=tol, equal_nan); ``nan_corner``: eager has a NaN
    where neither the reference nor the mode has one and the mode is allclose (4e-2) to the reference cast to its
    dtype (torch counts that as better than eager); ``mode_rmse`` / ``eager_rmse``: rmse against the reference over
    every element (NaN/Inf propagate: an Inf in eager makes its rmse Inf, and any finite rmse passes against it)."""
    if allclose_eager or nan_corner:
        return True
    passes = mode_rmse <= multiplier * eager_rmse + tol / 10.0  # False when either is NaN
    if not passes and equal_nan and math.isnan(eager_rmse) and math.isnan(mode_rmse):
        passes = True
    return passes
