"""Capture-layer pieces that need no GPU: mode parsing, the CuTeDSL arch, backend availability on this machine."""

from __future__ import annotations

import pytest

from kernelscope.capture.modes import parse_backends, parse_modes
from kernelscope.capture.worker import _quantiles, cute_dsl_arch
from kernelscope.errors import UsageError


@pytest.mark.parametrize(("cc", "arch"), [((9, 0), "sm_90a"), ((10, 0), "sm_100a"), ((8, 0), "sm_80"),
                                          ((12, 0), "sm_120a")])
def test_cute_dsl_arch_from_capability(cc, arch):
    # H200 is 9.0: without CUTE_DSL_ARCH=sm_90a torch 2.14.1 compiled NVGEMM for sm_100a and every choice failed
    assert cute_dsl_arch(*cc) == arch


def test_modes_parse_with_pinned_backends():
    modes = parse_modes("eager,default,max-autotune,max-autotune:TRITON+ATEN,reduce-overhead", ("NVGEMM",))
    assert [m.name for m in modes] == ["eager", "default", "max-autotune", "max-autotune:TRITON+ATEN",
                                       "reduce-overhead"]
    assert modes[2].gemm_backends == ("NVGEMM",) and modes[3].gemm_backends == ("TRITON", "ATEN")
    assert modes[2].compile_mode == "max-autotune-no-cudagraphs" and not modes[2].cudagraphs
    assert modes[4].cudagraphs and modes[4].needs_cuda
    assert modes[3].dirname == "max-autotune_TRITON-ATEN"


@pytest.mark.parametrize(("text", "message"), [
    ("", "--modes is empty"), ("eager,eager", "listed twice"), ("default:TRITON", "only max-autotune"),
    ("max-autotune:FOO", "unknown GEMM backend 'FOO'"),
])
def test_bad_modes(text, message):
    with pytest.raises(UsageError, match=message):
        parse_modes(text)


def test_backends_are_case_insensitive():
    assert parse_backends("aten, triton") == ("ATEN", "TRITON")
    assert parse_backends(None) is None


def test_quantiles_interpolate():
    q = _quantiles([4.0, 1.0, 3.0, 2.0])
    assert (q["median"], q["q1"], q["q3"], q["iqr"], q["min"], q["mean"]) == (2.5, 1.75, 3.25, 1.5, 1.0, 2.5)


def test_backend_availability_on_this_cpu_machine():
    torch = pytest.importorskip("torch")
    from kernelscope.capture.worker import backend_available

    assert backend_available(torch, "CPP", "cpu") == (True, "")
    ok, why = backend_available(torch, "NVGEMM", "cpu")
    assert not ok and "GPU backend" in why
    ok, why = backend_available(torch, "CUTLASS", "cuda")
    assert not ok and "CUTLASS source headers" in why
