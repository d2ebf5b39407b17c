"""A mixture-of-experts model in bfloat16 is judged against a float32 reference with eager's own error as the
yardstick, and gets the plain recommendation: tests/data/cpu-torch2.14.1/hf_mixtral_eager_default_bf16 (the zoo's
tests/zoo/models/hf_mixtral.py, eager and default, recorded with ``--dtype bfloat16``; README.md there).

Its experts run ``torch._grouped_mm``, which has no float64 kernel: the reference runs in float32 and says why
float64 could not. The compiled mode's error against that reference is set against eager's (torch's
``torch._dynamo.utils.same`` rule), so a token routed to another expert by a last-bit difference does not fail a
compile whose error is eager's."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from kernelscope.analysis.mode import build_mode_result
from kernelscope.analysis.numerics import numerics_verdict
from kernelscope.analysis.recommend import recommend
from kernelscope.result import ModeResult

from .zoo_fixtures import extract_run

CPU = Path(__file__).resolve().parent / "data" / "cpu-torch2.14.1"


@cache
def _modes() -> tuple[ModeResult, ...]:
    run = extract_run(CPU / "hf_mixtral_eager_default_bf16.tar.gz")
    return tuple(build_mode_result(run, json.loads((run / "modes" / m / "capture.json").read_text()))
                 for m in ("eager", "default"))


def test_the_reference_runs_in_float32_where_float64_cannot_run_the_grouped_gemm():
    for m in _modes():
        ref = m.numerics.reference
        assert (ref.dtype, ref.weights, ref.skipped) == ("float32", "float32", ""), m.name
        assert ref.float64_error == ("RuntimeError: Expected mat_a to be Float32, BFloat16 or Float16 matrix, "
                                     "got Double"), m.name
        assert m.numerics.tolerance.dtype == "bfloat16", m.name


def test_the_compiled_mode_passes_with_eagers_error_as_the_yardstick():
    eager, default = _modes()
    assert numerics_verdict(eager.numerics, is_eager=True).status == "pass"
    v = numerics_verdict(default.numerics, is_eager=False)
    assert (v.status, v.against, v.vs_reference) == ("pass", "reference", True)
    (out,) = v.outputs
    # the logits' rmse against the float32 reference is set against eager's own (x 3 for bf16, + tol / 10)
    assert out.rule.code == "rmse-within"
    args = out.rule.args
    assert args["eager_rmse"] == eager.numerics.vs_reference.rmse
    assert args["bound"] == pytest.approx(args["multiplier"] * args["eager_rmse"] + args["tol"] / 10)
    assert args["rmse"] <= args["bound"]


def test_the_recommendation_is_the_compiled_mode_not_eager():
    rec = recommend(_modes())
    assert rec.mode == "default"
    assert rec.reasons[0].code == "faster-beyond-noise"
    assert {c.mode: (c.numerics, c.vs_reference, c.eligible) for c in rec.candidates} == {
        "eager": ("pass", "pass", True), "default": ("pass", "pass", True)}
