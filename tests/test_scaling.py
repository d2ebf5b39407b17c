"""`kernelscope analyze` stays linear in the trace's size, whatever the machine's speed.

A pass that scans every event once per iteration window (``launch_profile`` once took 315 s on a 1M-event trace
that way) grows 16x when the trace grows 4x; a linear one 4x. Each test builds traces of N and 4N events from a real
trace (benchmarks/gen_large_trace.py, the large-trace benchmark's generator: every copy is more iterations of the
same run) and times the whole command in this process, reports included, as the CLI runs it. It compares times
measured on the same machine a moment apart, so a slow CI machine changes both alike:

- imports are warmed up first, and the command's fixed cost (report templates, result writing) is measured on the
  unreplicated trace and taken off both times, so the ratio is the per-event cost's;
- runs of N and 4N alternate (a neighbour's load hits both) and the fastest of each is kept;
- the test fails when the ratio is above RATIO_LIMIT (linear 4, quadratic 16).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kernelscope.analysis.mode import analyze_trace_file
from kernelscope.cli import main

from .conftest import DATA, H200_211, H200_2141, benchmark_module

gen = benchmark_module("gen_large_trace")

N_EVENTS = 25_000
GROWTH = 4
RATIO_LIMIT = 6.0
REPEATS = 3

# The shapes of real runs, each through another path of the analysis.
SHAPES = {
    # ProfilerStep windows, runtime launches with correlation ids, kernels, CPU ops; trace-only GEMM verdicts
    "profiler-steps": (H200_2141 / "mmrelu-nvgemm.trace.json.gz", None),
    # iterations inferred from the compiled graph's calls; GEMMs aligned to the Inductor code's call sites
    "compiled-with-code": (H200_211 / "seed-default.trace.json.gz", H200_211 / "seed-default.code.py"),
    # eager on the GPU: the CPU op tree of every checked iteration
    "eager-gpu": (H200_211 / "big-eager.trace.json.gz", None),
    # eager on the CPU: CPU ops are the kernels (nesting, helpers, composite ops)
    "eager-cpu": (next((DATA / "cpu-torch2.14.1" / "llama_block" / "tb" / "eager").glob("*.pt.trace.json.gz")), None),
}


def _cpu_seconds(run: Callable[[], object]) -> float:
    """CPU seconds of one call, in this process (CPU time: what other processes on a shared machine do changes it
    far less than wall time)."""
    gc.collect()  # garbage of the previous run is not this run's work
    t = time.process_time()
    run()
    return time.process_time() - t


def _command(trace: Path, code: Path | None, out: Path) -> Callable[[], object]:
    """`kernelscope analyze TRACE [--code CODE] --out OUT --force`, as the CLI runs it (reports included)."""
    argv = ["analyze", str(trace), "--out", str(out), "--force", *(["--code", str(code)] if code else [])]

    def run() -> None:
        try:
            main(argv)
        except SystemExit as exc:
            if exc.code:
                raise AssertionError(f"kernelscope {' '.join(argv)} exited {exc.code}") from exc

    return run


def _growth(shape: str, fixture: Path, tmp_path: Path, run_on: Callable[[Path], Callable[[], object]],
            n: int = N_EVENTS) -> str:
    """Time ``run_on(trace)`` on the fixture and on traces of N and 4N events built from it; fail when the time
    (less the fixed cost) grows more than RATIO_LIMIT times. Returns the line of numbers."""
    small = gen.write_large_trace(fixture, n, tmp_path / "n.trace.json")
    large = gen.write_large_trace(fixture, GROWTH * n, tmp_path / "4n.trace.json")
    assert large.copies == pytest.approx(GROWTH * small.copies, rel=0.05)
    _cpu_seconds(run_on(fixture))  # warm-up: imports, first-call caches
    fixed = min(_cpu_seconds(run_on(fixture)) for _ in range(REPEATS))
    times: dict[str, list[float]] = {"n": [], "4n": []}
    for _ in range(REPEATS):
        times["n"].append(_cpu_seconds(run_on(small.path)))
        times["4n"].append(_cpu_seconds(run_on(large.path)))
        ratio = (min(times["4n"]) - fixed) / max(min(times["n"]) - fixed, 1e-3)
        if ratio > 2 * RATIO_LIMIT:
            break  # superlinear beyond noise: more repeats of a slow run would only take longer
    t_n, t_4n = min(times["n"]), min(times["4n"])
    line = (f"{shape}: fixed {fixed:.3f} s, {small.events} events {t_n:.3f} s, {large.events} events {t_4n:.3f} s: "
            f"ratio {ratio:.2f}")
    assert ratio <= RATIO_LIMIT, (
        f"{shape}: {GROWTH}x the events took {ratio:.1f}x the time ({t_4n:.2f} s for {large.events} events, "
        f"{t_n:.2f} s for {small.events}, fixed cost {fixed:.2f} s taken off both): a pass over the events "
        f"is superlinear (linear is {GROWTH}x); profile `kernelscope analyze` on a large trace")
    return line


@pytest.mark.parametrize("shape", list(SHAPES))
def test_analyze_time_grows_linearly_with_the_trace(tmp_path: Path, shape: str,
                                                    capsys: pytest.CaptureFixture[str]):
    # GIVEN a real trace, and the same run replicated to N and to 4N events
    fixture, code = SHAPES[shape]
    out = tmp_path / "out"

    # WHEN the whole command runs on each, after a warm-up
    # THEN 4x the events costs about 4x the time, not 16x
    line = _growth(shape, fixture, tmp_path, lambda trace: _command(trace, code, out))
    capsys.readouterr()
    print(line)


def test_one_long_iteration_stays_linear(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """--iterations 1 makes the whole trace one iteration: the passes that work per iteration (compiled regions and
    their kernels, the eager op tree, GEMMs across iterations) then see every event at once. Load and every analysis
    pass are timed, not the reports: they list every GEMM of that iteration (thousands), linear but slow to render."""
    fixture, code = H200_211 / "seed-default.trace.json.gz", H200_211 / "seed-default.code.py"

    def run_on(trace: Path) -> Callable[[], object]:
        return lambda: analyze_trace_file(trace, [code], mode="trace", iterations=1, log_path=None, command="test")

    line = _growth("one-iteration", fixture, tmp_path, run_on, n=10_000)
    capsys.readouterr()
    print(line)


# A compiled mode's analysis (output code, provenance, compile log, trace) at 4 and 16 decoder layers: the same model
# file recorded at both sizes on the CPU (tests/data/cpu-torch2.14.1/README.md). Nothing is taken off as a fixed
# cost here, so linear reads at most 4x; quadratic passes per GEMM read 5.7x.
LAYERS_RATIO_LIMIT = 4.6


def test_a_compiled_modes_analysis_grows_linearly_with_the_layers(capsys: pytest.CaptureFixture[str]):
    """What `profile` does per mode once its processes ended (analysis/ranks.py build_any_mode_result), on a real
    model's output code at 4x the layers. Per GEMM, a pass over the whole log's fusion decisions, the code's
    buffers or the call sites before it grows with the square of the layers: a 1B Llama's 16 layers paid it in the
    run's last seconds, after every timing."""
    from kernelscope.analysis.ranks import build_any_mode_result
    from kernelscope.capture_record import read_capture

    from .zoo_fixtures import extract_run

    runs = {n: extract_run(DATA / "cpu-torch2.14.1" / f"hf_llama-{n}-layers.tar.xz") for n in (4, 16)}
    recs = {n: read_capture(run / "modes" / "default" / "capture.json") for n, run in runs.items()}
    assert all(r is not None and r.status == "ok" for r in recs.values())

    def run_on(n: int) -> Callable[[], object]:
        return lambda: build_any_mode_result(runs[n], recs[n])  # type: ignore[arg-type]

    # GIVEN both sizes analysed once (imports, first-call caches) and each result read
    small, large = run_on(4)(), run_on(16)()
    assert (len(small.gemms), len(large.gemms)) == (29, 113)  # type: ignore[attr-defined]

    # WHEN each is timed, alternating, best of REPEATS
    times: dict[int, list[float]] = {4: [], 16: []}
    for _ in range(REPEATS):
        for n in (4, 16):
            times[n].append(_cpu_seconds(run_on(n)))
    t4, t16 = min(times[4]), min(times[16])
    ratio = t16 / t4

    # THEN 4x the layers costs at most about 4x the time
    assert ratio <= LAYERS_RATIO_LIMIT, (
        f"4x the layers took {ratio:.1f}x the time ({t16:.2f} s for 16 layers, {t4:.2f} s for 4): a pass per GEMM "
        f"over the whole model is back; profile build_any_mode_result on the 16-layer run")
    capsys.readouterr()
    print(f"layers 4: {t4:.3f} s, 16: {t16:.3f} s: ratio {ratio:.2f}")
