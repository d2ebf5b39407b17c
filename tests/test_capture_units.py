"""Capture-layer pieces that need no GPU: mode parsing, the CuTeDSL arch, backend availability on this machine."""

from __future__ import annotations

import pytest

from kernelscope.capture.environment import cute_dsl_arch
from kernelscope.capture.modes import parse_backends, parse_modes
from kernelscope.capture.timing import _quantiles
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
    from kernelscope.capture.environment import backend_available

    assert backend_available(torch, "CPP", "cpu") == (True, "")
    ok, why = backend_available(torch, "NVGEMM", "cpu")
    assert not ok and "GPU backend" in why
    ok, why = backend_available(torch, "CUTLASS", "cuda")
    assert not ok and "CUTLASS source headers" in why


def test_the_cutlass_check_reads_inductors_setting_without_loading_inductor(tmp_path):
    # Inductor's own default for cuda.cutlass_dir, worked out without importing Inductor (seconds on the H200),
    # and the same answer as Inductor's configuration once it is loaded.
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "include" / "cutlass").mkdir(parents=True)
    code = (
        "import json, sys, torch\n"
        "from kernelscope.capture.environment import backend_available\n"
        "before = backend_available(torch, 'CUTLASS', 'cuda')\n"
        "loaded = 'torch._inductor' in sys.modules\n"
        "import torch._inductor.config as ic\n"
        "after = backend_available(torch, 'CUTLASS', 'cuda')\n"
        "print(json.dumps([before, loaded, after]))\n"
    )
    for env_dir, ok in ((str(tmp_path), True), (str(tmp_path / "missing"), False)):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "TORCHINDUCTOR_CUTLASS_DIR": env_dir})
        before, loaded, after = json.loads(out.stdout.strip().splitlines()[-1])
        assert not loaded
        assert before[0] is ok and after[0] is ok, (before, after)


def test_a_timing_only_process_reads_a_light_environment():
    # A later process of --processes: the report reads the first process's environment, so the later ones skip
    # the subprocess (nvidia-smi on a GPU) and the imports; what identifies the machine stays.
    torch = pytest.importorskip("torch")
    from kernelscope.capture.environment import environment

    full, light = environment(torch, "cpu"), environment(torch, "cpu", full=False)
    assert "gemm_backends" in full and "triton" in full
    assert "gemm_backends" not in light and "triton" not in light
    assert {k: full[k] for k in light} == light


# ------------------------------------------------------------------ steady-state windows (real timer, real sleeps)
class _Sleeper:
    """A call whose real duration follows a schedule: seconds for the n-th call."""

    def __init__(self, schedule):
        self.n, self.schedule = 0, schedule

    def __call__(self):
        import time

        time.sleep(self.schedule(self.n))
        self.n += 1


class _ScheduledTimer:
    """Times a _Sleeper by its schedule: the calls really sleep (wall-clock budgets hold) but each reads exactly
    its scheduled seconds, so a loaded CI host's sleep jitter cannot make a steady call look drifting."""

    def time(self, call, n):
        total = 0.0
        for _ in range(n):
            total += call.schedule(call.n)
            call()
        return total / n


def _cpu_timer():
    torch = pytest.importorskip("torch")
    from kernelscope.capture.timing import _Timer

    return _Timer(torch, "cpu")


def test_the_cpu_timer_reads_wall_time_per_call():
    call = _Sleeper(lambda n: 0.002)
    per = _cpu_timer().time(call, 3)
    assert call.n == 3 and per >= 0.002  # a sleep lasts at least its time; no upper bound on a loaded host


def test_drift_compares_the_halves_of_a_window():
    from kernelscope.capture.timing import _drift

    assert _drift([1.0] * 10) == 0.0
    assert _drift([2.0] * 5 + [1.0] * 5) == pytest.approx(1.0 / 1.5)
    assert _drift([1.0, 2.0, 1.0]) == 0.0  # too short to split


def test_a_window_that_still_drifts_is_warm_up_and_is_timed_again():
    from kernelscope.capture.timing import DRIFT_LIMIT, _steady_samples

    # 4 ms per call for the first 6 calls, then 1 ms: the first window (10 calls) straddles the step.
    call = _Sleeper(lambda n: 0.004 if n < 6 else 0.001)
    samples, windows, drift = _steady_samples(_ScheduledTimer(), call, 1, 10, budget_s=30)
    assert windows == 2 and drift <= DRIFT_LIMIT and call.n == 20
    assert max(samples) < 3.0  # the kept window is the steady 1 ms one (ms per call)


def test_a_steady_call_is_timed_once():
    from kernelscope.capture.timing import _steady_samples

    call = _Sleeper(lambda n: 0.002)
    samples, windows, drift = _steady_samples(_ScheduledTimer(), call, 2, 10, budget_s=30)
    assert windows == 1 and call.n == 20 and len(samples) == 10 and drift < 0.10


def test_a_call_that_never_settles_stops_after_the_last_window_and_says_how_far_it_drifted():
    from kernelscope.capture.timing import DRIFT_LIMIT, MAX_WINDOWS, _steady_samples

    call = _Sleeper(lambda n: 0.001 * (1 + n))  # 1 ms more per call, for ever
    samples, windows, drift = _steady_samples(_ScheduledTimer(), call, 1, 8, budget_s=30)
    assert windows == MAX_WINDOWS and drift > DRIFT_LIMIT and call.n == 8 * MAX_WINDOWS


def test_windows_stop_when_the_next_one_would_overrun_the_budget():
    from kernelscope.capture.timing import _steady_samples

    call = _Sleeper(lambda n: 0.001 * (1 + n))
    _, windows, drift = _steady_samples(_ScheduledTimer(), call, 1, 8, budget_s=0.05)  # the first window takes ~36 ms
    assert windows == 1 and drift > 0.10


def test_the_compile_hooks_come_off():
    # GIVEN torch's autotune entry point and its provenance dump WHEN the worker hooks them and restores THEN
    # torch's own are back (the worker calls these in the finally around the first call)
    torch = pytest.importorskip("torch")
    import torch._inductor.debug as dbg
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    from kernelscope.capture.compiling import _announce_autotune, _record_provenance

    before = (AlgorithmSelectorCache.__call__, getattr(dbg, "dump_inductor_provenance_info", None))
    restore_autotune, restore_provenance = _announce_autotune(), _record_provenance(torch, [], {})
    assert AlgorithmSelectorCache.__call__ is not before[0]
    assert _announce_autotune()() is None  # already hooked: the inner call leaves the hook to the outer one
    assert AlgorithmSelectorCache.__call__ is not before[0]
    restore_provenance()
    restore_autotune()
    assert (AlgorithmSelectorCache.__call__, getattr(dbg, "dump_inductor_provenance_info", None)) == before


def test_a_workers_inductor_configuration_comes_off_when_it_closes():
    # GIVEN a max-autotune worker's setup on this CPU (freezing, C++ kernel profiling, the usable GEMM backends)
    pytest.importorskip("torch")
    import dataclasses

    import torch._inductor.config as ic

    from kernelscope.capture.setup import _Setup

    def config():
        return ic.freezing, ic.max_autotune_gemm_backends, ic.cpp.enable_kernel_profile

    before = config()
    setup = _Setup({"mode": dataclasses.asdict(parse_modes("max-autotune")[0]), "device": "cpu"}, {})
    on = config()
    assert on[0] is True and on[2] is True and on != before
    # WHEN it closes THEN Inductor's configuration is what it was
    setup.close()
    assert config() == before


class _TailTimer:
    """A GPU-like timer: a sample of n back-to-back calls pays a fixed tail once (the last kernel and the event's
    latency after the final launch), so one synchronized call reads per + tail."""

    def __init__(self, per_s, tail_s):
        self.per, self.tail, self.calls = per_s, tail_s, 0

    def time(self, call, n):
        self.calls += n
        return (self.tail + n * self.per) / n


def test_calls_per_sample_come_from_back_to_back_time_not_from_a_synchronized_single_call():
    # GIVEN 30 µs per call back to back and a 40 µs cost per sample (a single synchronized call reads 70 µs, as
    # default mode's read up to 3x on the H200) WHEN the count per sample is chosen THEN a sample lasts SAMPLE_S,
    # not the 0.43 of it that the single call's time gives
    from kernelscope.capture.timing import SAMPLE_S, _batched_estimate, calls_per_sample

    timer = _TailTimer(30e-6, 40e-6)
    single = timer.time(None, 1)
    assert calls_per_sample(single) * 30e-6 < 0.45 * SAMPLE_S
    est = _batched_estimate(timer, None, single)
    n = calls_per_sample(est)
    assert 0.95 * SAMPLE_S <= n * 30e-6 <= SAMPLE_S
    assert (est - 30e-6) * n / (n * 30e-6) < 0.01  # what c still adds per call: under 1%
    assert timer.calls < 3 * 3 * n  # at most 3 rounds of 3 samples, not a second warm-up


def test_a_call_of_two_samples_or_more_is_not_batched():
    from kernelscope.capture.timing import SAMPLE_S, _batched_estimate, calls_per_sample

    slow = 2 * SAMPLE_S + 40e-6
    timer = _TailTimer(2 * SAMPLE_S, 40e-6)
    assert _batched_estimate(timer, None, slow) == slow and timer.calls == 0
    assert calls_per_sample(slow) == 1 and calls_per_sample(SAMPLE_S / 10) == 10


def test_torchrun_ranks_batch_on_the_slowest_ranks_estimate():
    # GIVEN a group whose slowest rank runs 60 µs per call WHEN this rank (30 µs) estimates THEN every round uses
    # the agreed (slowest) time, so every rank makes the same calls and picks the same count
    from kernelscope.capture.timing import _batched_estimate, calls_per_sample

    class Group:
        def __init__(self):
            self.asked = []

        def agree_max(self, x):
            self.asked.append(x)
            return max(x, 60e-6)

    g = Group()
    est = _batched_estimate(_TailTimer(30e-6, 40e-6), None, 70e-6, agree=g)
    assert est == 60e-6 and calls_per_sample(est) == calls_per_sample(60e-6)  # not this rank's own count
    assert calls_per_sample(60e-6) < calls_per_sample(31e-6)
    assert g.asked[0] == 70e-6 and len(g.asked) == 2


def test_the_warm_up_lasts_at_least_its_minimum_time_however_stable_the_first_calls_are():
    # A timer that reads the same 1 ms every call (perfectly stable, as a loaded CI host's sleep is not) but takes
    # real time, so the minimum time is measured on the wall clock and the stability rule cannot be fooled by jitter
    import time

    from kernelscope.capture.timing import _warm_up

    class Steady:
        def time(self, call, n):
            time.sleep(0.001 * n)
            return 0.001

    quick = _warm_up(Steady(), None, min_calls=5, max_seconds=10)
    assert quick["calls"] == 5
    t0 = time.perf_counter()
    slow = _warm_up(Steady(), None, min_calls=5, max_seconds=10, min_seconds=0.1)
    assert time.perf_counter() - t0 >= 0.1 and slow["calls"] > 5
    capped = _warm_up(Steady(), None, min_calls=5, max_seconds=0.05, min_seconds=5)
    assert capped["calls"] < 60  # the budget still ends it