"""The one numerics tolerance table and the pass rules against the high-precision reference. Pure: no torch.

A base module: the capture worker counts mismatches with ``tolerance_for`` and records ``reference_pass``; the
analysis layer (analysis/numerics.py) and the reports read the same table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Tolerance:
    dtype: str
    atol: float
    rtol: float


# A compiled mode's output vs eager's, for the run's --dtype. These are looser than torch.testing's defaults on
# purpose: Inductor reorders reductions (a K=4096 dot product summed in another order, a fused epilogue that skips
# a rounding to the storage dtype), which moves results by a few units in the last place of the dtype. Each row
# allows roughly 8-16 ulp near 1.0 (fp16 ulp 9.8e-4, bf16 7.8e-3, fp32 1.2e-7), the scale at which the H200
# fixtures differ (seed max-autotune, fp16: max abs error 1.46e-3, one ulp at 1-2). fp32 assumes TF32 is off, as
# it is by default for matmuls.
TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance("float64", atol=1e-7, rtol=1e-7),
    "float32": Tolerance("float32", atol=1e-4, rtol=1e-4),
    "float16": Tolerance("float16", atol=1e-2, rtol=1e-2),
    "bfloat16": Tolerance("bfloat16", atol=6e-2, rtol=6e-2),
}
DEFAULT_TOLERANCE_DTYPE = "float32"  # also used for int/fp8/unknown dtypes, where the run did not say

# Against the high-precision reference a low-precision mode is judged relative to eager in the same dtype, the
# rule of PyTorch's own accuracy checker (torch._dynamo.utils.same with fp64_ref, used by its benchmark suites):
# pass when rmse(mode, ref) <= MULTIPLIER * rmse(eager, ref) + atol / 10. A deep fp16 model is far from the float64
# answer in eager too; what matters is that compiling did not make it markedly worse. A mode within the dtype's
# tolerance of the reference element-wise passes regardless.
REFERENCE_MULTIPLIER = 2.0


def tolerance_for(dtype: str | None) -> Tolerance:
    """The tolerance row for a dtype name ("float16", "torch.float16", "fp16", "half", ...)."""
    name = (dtype or "").removeprefix("torch.").lower()
    name = {"fp64": "float64", "double": "float64", "fp32": "float32", "float": "float32", "fp16": "float16",
            "half": "float16", "bf16": "bfloat16"}.get(name, name)
    return TOLERANCES.get(name, TOLERANCES[DEFAULT_TOLERANCE_DTYPE])


def reference_bound(eager_rmse: float | None, tol: Tolerance) -> float | None:
    """The largest rmse vs the reference that still passes (see REFERENCE_MULTIPLIER)."""
    if eager_rmse is None:
        return None
    return REFERENCE_MULTIPLIER * eager_rmse + tol.atol / 10.0


def reference_pass(mode_rmse: float | None, eager_rmse: float | None, mismatch_fraction: float | None,
                   new_nonfinite: int, tol: Tolerance) -> bool | None:
    """vs-reference verdict from the measured figures; None when nothing was measured."""
    if new_nonfinite:
        return False  # NaN/Inf where the reference is finite is never "as accurate as eager"
    if mismatch_fraction == 0.0:
        return True  # element-wise within the dtype's tolerance of the exact answer
    bound = reference_bound(eager_rmse, tol)
    if mode_rmse is None or bound is None:
        return None
    return mode_rmse <= bound
