"""kernelscope's verdict against the float64 reference is torch's own accuracy rule.

The oracle is torch itself: ``torch._dynamo.utils.same(eager, mode, fp64_ref=reference, tol, equal_nan)`` run on the
very tensors the worker's rule (capture/numerics.py, by kernelscope/tolerance.py) judges, with the arguments
torch's benchmark suite passes for inference in that dtype. Pure tensors, no compile: fast. A torch that changes
its rule (the multiplier, the allclose shortcut, the NaN corner) fails here first.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch._dynamo.utils import same

from kernelscope.capture.numerics import _numerics
from kernelscope.tolerance import (
    RULE_TORCH,
    equal_nan_for,
    reference_multiplier,
    reference_pass,
    tolerance_for,
)

HOW = {"dtype": "float64", "device": "cpu"}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
SIZES = {"small": (6, 50), "large": (8, 1000)}  # 300 elements (< 1000: torch's noisy-small multiplier), 8000


def _quiet(*_args, **_kwargs) -> None:
    """torch's log_error: the oracle's failures are expected here."""


def torch_same(eager, mode, ref, dtype: str) -> bool:
    return bool(same(eager, mode, fp64_ref=ref, tol=tolerance_for(dtype).same_tol, equal_nan=equal_nan_for(dtype),
                     log_error=_quiet))


def kernelscope(eager, mode, ref, dtype: str) -> dict:
    named = lambda ts: [(f"[{i}]", t) for i, t in enumerate(ts)]  # noqa: E731
    return _numerics(torch, named(mode), named(eager), named(ref), dict(HOW), dtype)


def make(dtype: str, size: str, eager_err: float, mode_err: float, seed: int = 0):
    """A float64 answer of scale ~1, eager off by ``eager_err`` (rms, on top of the dtype's own rounding) and the mode
    by ``mode_err``: the two errors torch's rule weighs against each other."""
    g = torch.Generator().manual_seed(seed)
    shape = SIZES[size]
    ref = torch.randn(shape, generator=g, dtype=torch.float64)
    eager = (ref + eager_err * torch.randn(shape, generator=g, dtype=torch.float64)).to(DTYPES[dtype])
    mode = (ref + mode_err * torch.randn(shape, generator=g, dtype=torch.float64)).to(DTYPES[dtype])
    return eager, mode, ref


# Errors scaled to each dtype's rounding (fp32 1e-3: well above its ulp; bf16 0.05: above its 7.8e-3 ulp at 1).
SCALE = {"float32": 1e-3, "float16": 1e-2, "bfloat16": 5e-2}
# (name, eager error, mode error, expected verdict per (dtype, size): "fp32 small/large, low precision")
CASES = [
    ("same-as-eager", 1.0, 1.0),  # Inductor's reordering: as far from float64 as eager
    ("closer-than-eager", 1.0, 0.2),  # fp32 intermediates: different, more accurate
    ("2.5x-eager", 1.0, 2.5),  # fp32 large fails (multiplier 2); small (< 1000) and fp16/bf16 pass (3)
    ("5x-eager", 1.0, 5.0),  # markedly less accurate: fails everywhere
]


def expected(case: str, dtype: str, size: str) -> bool:
    if case == "2.5x-eager":
        return size == "small" or dtype != "float32"
    return case != "5x-eager"


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize(("case", "eager_k", "mode_k"), CASES, ids=[c[0] for c in CASES])
def test_the_reference_verdict_is_torchs_same(case, eager_k, mode_k, dtype, size):
    # GIVEN eager and a mode off the float64 answer by known amounts
    eager, mode, ref = make(dtype, size, eager_k * SCALE[dtype], mode_k * SCALE[dtype])
    # WHEN kernelscope's worker judges them and torch's own checker judges the same tensors
    num = kernelscope([eager], [mode], [ref], dtype)
    oracle = torch_same(eager, mode, ref, dtype)
    # THEN they agree, per output and for the mode, and the case meant what it says
    (out,) = num["outputs"]
    assert out["vs_reference"]["pass"] is oracle
    assert num["vs_reference"]["pass"] is oracle
    assert oracle is expected(case, dtype, size)
    # the figures the report prints are the rule's own: bound = multiplier x eager's rmse + tol/10
    vr = out["vs_reference"]
    tol = tolerance_for(dtype).same_tol
    assert vr["multiplier"] == (2.0 if dtype == "float32" and size == "large" else 3.0)
    assert vr["bound_rmse"] == pytest.approx(vr["multiplier"] * vr["eager_rmse"] + tol / 10)
    assert (vr["rmse"] <= vr["bound_rmse"] or vr["same_allclose"]) is oracle


def _overflow(dtype: str, where: str):
    """A real overflow: the largest finite value of the dtype times 4 (fp16 65504, bf16/fp32 ~3.4e38) where the
    float64 answer is finite, in eager, in the mode, or in both at the same places."""
    big = torch.finfo(DTYPES[dtype]).max
    eager, mode, ref = make(dtype, "large", SCALE[dtype], SCALE[dtype])
    if where == "eager-nan":  # torch's corner: eager NaN where the reference and the mode are finite and close
        eager = eager.clone()
        eager[0, :5] = float("nan")
        return eager, ref.to(DTYPES[dtype]), ref
    ref = ref.clone()
    ref[0, :5] = 2.0 * big  # finite in float64
    x = torch.full((5,), 2.0 * big, dtype=torch.float64)
    if where in ("eager", "both"):
        eager = eager.clone()
        eager[0, :5] = (x * 2).to(DTYPES[dtype])  # overflows to Inf in the dtype
    if where in ("mode", "both"):
        mode = mode.clone()
        mode[0, :5] = (x * 2).to(DTYPES[dtype])
    if where == "mode-nan":
        mode = mode.clone()
        mode[0, :5] = float("nan")
    return eager, mode, ref


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize(("where", "verdict"), [("eager", True), ("mode", False), ("both", True),
                                                ("mode-nan", False), ("eager-nan", True)])
def test_a_real_overflow_is_judged_as_torch_judges_it(dtype, where, verdict):
    eager, mode, ref = _overflow(dtype, where)
    assert torch.isinf(eager).any() or torch.isinf(mode).any() or torch.isnan(eager).any() or torch.isnan(mode).any()
    num = kernelscope([eager], [mode], [ref], dtype)
    oracle = torch_same(eager, mode, ref, dtype)
    assert num["outputs"][0]["vs_reference"]["pass"] is oracle is verdict
    vr = num["vs_reference"]
    if where == "both":
        # torch compares with eager, which overflows at the same places: it passes. kernelscope's one rule on top:
        # NaN/Inf where the float64 answer is finite fails any mode (eager too): the model overflows in this dtype.
        assert vr["pass"] is False and "NaN/Inf where the float64 reference is finite" in vr["reason"]
        assert "torch's rule" in vr["reason"]
    else:
        assert vr["pass"] is oracle


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_several_outputs_each_judged_and_the_failing_one_named(dtype):
    e1, m1, r1 = make(dtype, "large", SCALE[dtype], SCALE[dtype], seed=1)
    e2, m2, r2 = make(dtype, "small", SCALE[dtype], 8 * SCALE[dtype], seed=2)
    num = kernelscope([e1, e2], [m1, m2], [r1, r2], dtype)
    oracle = torch_same([e1, e2], [m1, m2], [r1, r2], dtype)
    assert [o["vs_reference"]["pass"] for o in num["outputs"]] == [torch_same(e1, m1, r1, dtype),
                                                                   torch_same(e2, m2, r2, dtype)] == [True, False]
    assert num["vs_reference"]["pass"] is oracle is False
    assert num["vs_reference"]["reason"].startswith("[1]: rmse ")
    assert [o["name"] for o in num["outputs"]] == ["[0]", "[1]"]


def test_one_by_one_maps_get_the_larger_multiplier_as_in_torch():
    # GIVEN an fp32 output shaped N x C x 1 x 1 (a pooled feature map), 8192 elements, the mode 2.5x eager's error
    g = torch.Generator().manual_seed(3)
    ref = torch.randn(8, 1024, 1, 1, generator=g, dtype=torch.float64)
    eager = (ref + 1e-3 * torch.randn(ref.shape, generator=g, dtype=torch.float64)).float()
    mode = (ref + 2.5e-3 * torch.randn(ref.shape, generator=g, dtype=torch.float64)).float()
    num = kernelscope([eager], [mode], [ref], "float32")
    # THEN torch's 1x1 clause gives 3, not 2, and both pass it
    assert num["outputs"][0]["vs_reference"]["multiplier"] == 3.0
    assert num["vs_reference"]["pass"] is torch_same(eager, mode, ref, "float32") is True


def test_the_multiplier_table_restates_torchs_get_multiplier():
    assert reference_multiplier("bfloat16", 10**6, (1000, 1000), 1e-3) == 3.0
    assert reference_multiplier("float32", 10**6, (1000, 1000), 1e-4) == 2.0
    assert reference_multiplier("float32", 999, (999,), 1e-4) == 3.0
    assert reference_multiplier("float32", 10**6, (1000, 1000), 2e-2) == 3.0  # tol >= 2e-2: "higher tolerance"
    assert reference_multiplier("float32", 10, (10,), 1e-4, larger_for_small=True) == 10.0
    assert reference_multiplier("float32", 400, (400,), 1e-4, larger_for_small=True) == 8.0
    assert reference_multiplier("float16", 10**6, (10**6,), 1e-3, force_max=True) == 10.0
    # NaN never passes the rmse bound; an Inf eager error lets any finite one through (as Python's <= does in torch)
    kw = {"allclose_eager": False, "nan_corner": False, "multiplier": 3.0, "tol": 1e-3}
    assert reference_pass(mode_rmse=math.nan, eager_rmse=1.0, equal_nan=True, **kw) is False
    assert reference_pass(mode_rmse=5.0, eager_rmse=math.inf, equal_nan=False, **kw) is True
    assert reference_pass(mode_rmse=math.nan, eager_rmse=math.nan, equal_nan=True, **kw) is True
    assert reference_pass(mode_rmse=math.nan, eager_rmse=math.nan, equal_nan=False, **kw) is False


def test_the_rule_is_the_installed_torchs():
    # The rule restated in tolerance.py was read from this torch; the oracle tests above run against it.
    assert torch.__version__.split("+")[0] == RULE_TORCH


class Experts(torch.nn.Module):
    """A mixture-of-experts layer's GEMMs: ``torch._grouped_mm`` over 4 experts, which has no float64 kernel."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(4)
        self.w = torch.nn.Parameter(torch.randn(4, 32, 16, generator=g) / 32**0.5)

    def forward(self, x):
        offs = torch.tensor([16, 32, 48, 64], dtype=torch.int32)
        return torch._grouped_mm(x, self.w, offs=offs)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_model_whose_ops_reject_float64_gets_a_float32_reference_in_a_lower_precision_run(dtype):
    from kernelscope.capture.numerics import _reference_output

    # GIVEN a model whose op rejects float64 (on the CPU too), built in float32 and run in a lower precision
    source = Experts(), [torch.randn(64, 32, generator=torch.Generator().manual_seed(5))]
    with pytest.raises(RuntimeError, match="got Double"):
        Experts().double()(source[1][0].double())
    run = Experts().to(DTYPES[dtype]), [source[1][0].to(DTYPES[dtype])]
    with torch.no_grad():
        want = source[0](source[1][0]).double()
    # WHEN the worker makes its reference
    out, how = _reference_output(torch, run[0], run[1], "cpu", dtype, source=source)
    # THEN it ran in float32, from the float32 weights, and says why not float64
    assert how["dtype"] == "float32" and how["weights"] == "float32" and "skipped" not in how
    assert how["float64_error"].startswith("RuntimeError: Expected mat_a to be Float32") and "Double" in \
        how["float64_error"]
    ((name, got),) = out
    assert name == "output" and got.dtype == torch.float64 and torch.equal(got, want)


def test_a_float32_run_gets_no_float32_reference_of_itself():
    from kernelscope.capture.numerics import _reference_output

    model, x = Experts(), torch.randn(64, 32)
    out, how = _reference_output(torch, model, [x], "cpu", "float32")
    assert out is None and how["skipped"].startswith("the float64 reference failed: RuntimeError: Expected mat_a")
    assert "float64_error" not in how


def test_torchs_rule_against_a_float32_reference_names_it():
    # GIVEN bf16 eager and a mode 5x as far off, judged against a float32 reference
    eager, mode, ref = make("bfloat16", "large", SCALE["bfloat16"], 5 * SCALE["bfloat16"])
    how = {"dtype": "float32", "device": "cpu", "float64_error": "RuntimeError: ... got Double"}
    num = _numerics(torch, [("logits", mode)], [("logits", eager)], [("logits", ref.float().double())], how,
                    "bfloat16")
    # THEN torch's rule decides as against float64, and the reason says which reference it was
    assert num["vs_reference"]["pass"] is torch_same(eager, mode, ref.float().double(), "bfloat16") is False
    assert "vs the float32 reference" in num["vs_reference"]["reason"]
    assert num["reference"] == how
