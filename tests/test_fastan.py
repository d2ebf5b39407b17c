"""The analysis' per-launch loops in C (kernelscope/analysis/_fastan.c) give exactly what their Python loops give,
or decline (None) and leave the Python loop to it.

Exactly: the same values of the same types (an empty launch window's time in launch calls is the int 0 of sum([]),
not 0.0), floats the same bit for bit (the same additions in the same order), the same objects where the loop passes
objects on, dicts in the same order. Held on every Kineto trace under tests/data (where the C loops must not
decline: they are the ones users run) and on random traces built to meet each decline and edge: several streams,
kernels without a launch, NaN and integer times, windows out of order, open and empty windows.
"""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path
from typing import Any

import pytest

from kernelscope.analysis import kernels as K
from kernelscope.analysis import launch as L
from kernelscope.trace import GPU_MEMOP_CATS, CpuEvent, GpuEvent, RuntimeEvent, Trace, load_trace

_fastan = pytest.importorskip("kernelscope.analysis._fastan", reason="the C analysis loops are not built")

DATA = Path(__file__).parent / "data"


def _kineto_traces() -> list[Path]:
    return [p for p in sorted(DATA.rglob("*.trace.json*")) if p.name.endswith((".json", ".json.gz"))]


def _same(a: Any, b: Any, where: str = "") -> None:
    """a and b equal, with the same types all the way down (floats by their bits, NaN as NaN)."""
    assert type(a) is type(b), (where, a, b)
    if isinstance(a, float):
        assert a.hex() == b.hex() or (math.isnan(a) and math.isnan(b)), (where, a, b)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where  # the same keys in the same order
        for k in a:
            _same(list(a).index(k), list(b).index(k), where)
            _same(a[k], b[k], f"{where}[{k!r}]")
            assert type(next(x for x in a if x == k)) is type(next(y for y in b if y == k)), where
    elif hasattr(a, "__struct_fields__"):
        for f in a.__struct_fields__:
            _same(getattr(a, f), getattr(b, f), f"{where}.{f}")
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    else:
        assert a == b, (where, a, b)


def _analysis(trace: Trace, pure: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    if pure:
        monkeypatch.setenv("KERNELSCOPE_PURE_ANALYSIS", "1")
    else:
        monkeypatch.delenv("KERNELSCOPE_PURE_ANALYSIS", raising=False)
    try:
        ka = K.analyze_kernels(trace)
    except Exception as exc:  # the same error either way  # noqa: BLE001
        return type(exc), str(exc)
    return ka, L.launch_profile(ka, trace)


def _windows(trace: Trace) -> tuple[list[float], list[float]]:
    windows, _, _ = K.find_iterations(trace)
    return [w[0] for w in windows], [w[1] for w in windows]


def _each_loop(trace: Trace) -> dict[str, tuple[Any, Any]]:
    """(C, Python) for each loop on one trace, fed the same inputs."""
    starts, ends = _windows(trace)
    said = K._launching_ops(trace)
    c_classes: dict[object, tuple[str, str]] = {}
    py_classes: dict[object, tuple[str, str]] = {}
    out: dict[str, tuple[Any, Any]] = {
        "instances": (_fastan.kernel_instances(trace.gpu, trace.runtime, said, c_classes, K._classify_key, starts,
                                               ends, GPU_MEMOP_CATS),
                      K._gpu_instances(trace, said, py_classes, starts, ends)),
    }
    raw, _ = out["instances"][1]
    count = max(len(starts), 1)
    out["tally"] = (_fastan.tally(raw, count), K._tally(raw, count))
    if out["instances"][0] is not None:
        assert c_classes == py_classes
    windows = tuple(zip(starts, ends))
    instances = tuple(k for k in raw if k.iteration >= 0)
    ka = K.KernelAnalysis(device="cuda", iterations=K.Iterations(count, "", True, (), ""), windows=windows,
                          instances=instances, stats=(), kernels_per_iter=0.0, memops_per_iter=0.0, by_category={},
                          by_backend={}, time_us_per_iter=0.0)
    out["busy"] = (_fastan.busy_per_iteration(instances), _python_busy(ka))
    busy_of = _python_busy(ka)
    out["windows"] = (_fastan.launch_windows(trace.runtime, L._IsLaunch(), windows, busy_of),
                      L._per_window(ka, trace, L._IsLaunch(), busy_of))
    out["top_level"] = (_fastan.top_level(trace.cpu), _pure(K._main_thread_top_level, trace.cpu))
    names = sorted({e.name for e in trace.cpu})[::2]
    for kind in (set, frozenset):
        out[f"named {kind.__name__}"] = (_fastan.named(trace.cpu, kind(names)),
                                         [e for e in trace.cpu if e.name in names])
    out["by_external_id"] = (_fastan.by_external_id(trace.cpu), {
        e.external_id: e for e in reversed(trace.cpu) if e.external_id is not None and e.cat == "cpu_op"})
    return out


def _pure(fn: Any, *args: Any) -> Any:
    mp = pytest.MonkeyPatch()
    mp.setenv("KERNELSCOPE_PURE_ANALYSIS", "1")
    try:
        return fn(*args)
    finally:
        mp.undo()


def _python_busy(ka: Any) -> dict[int, float]:
    busy: dict[int, float] = _pure(L._busy_per_iteration, ka)
    return busy


def test_there_are_gpu_traces_to_compare() -> None:
    assert sum(1 for _ in _kineto_traces()) >= 20


def test_the_analysis_is_the_same_with_the_c_loops_on_every_test_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu_traces = 0
    for path in _kineto_traces():
        trace = load_trace(path)
        with K.cpu_names_kept(trace):
            c, py = _analysis(trace, False, monkeypatch), _analysis(trace, True, monkeypatch)
            _same(c, py, str(path))
            if trace.gpu:
                gpu_traces += 1
                # the C loops took these traces (none declined): they are what users run
                for name, (native, _) in _each_loop(trace).items():
                    assert native is not None, (path, name)
    assert gpu_traces >= 20


def test_each_c_loop_equals_its_python_loop_on_the_test_traces() -> None:
    for path in _kineto_traces():
        trace = load_trace(path)
        if not trace.gpu:
            continue
        with K.cpu_names_kept(trace):
            for name, (native, python) in _each_loop(trace).items():
                _same(native, python, f"{path} {name}")


# ---- random traces: every order, gap, decline ----------------------------------------------------------------

_NAMES = ["sm90_xmma_gemm_f16f16", "triton_poi_fused_add_0", "nvjet_sm90_hsh_64x16", "void at::native::elementwise",
          "Memset (Device)", "Memcpy HtoD (Pageable -> Device)", "cutlass_cute_gemm", "triton_red_fused_sum_1"]
_RUNTIME = ["cudaLaunchKernel", "cuLaunchKernelEx", "cudaMemsetAsync", "cudaMemcpyAsync", "cudaStreamSynchronize",
            "cudaGraphLaunch", "cudaEventRecord"]


def _random_trace(rng: random.Random) -> Trace:
    steps = rng.randrange(0, 6)
    t = 1000.0 * rng.randrange(1, 9)
    cpu: list[CpuEvent] = []
    runtime: list[RuntimeEvent] = []
    gpu: list[GpuEvent] = []
    corr = ext = 0
    streams = [7] if rng.random() < 0.6 else [7, 13, 21]
    odd = rng.random() < 0.25  # NaN / integer / duplicate values somewhere
    stride = rng.choice([1, 1, 1_000_003])  # ids far apart now and then (C: a hash table, not an array)
    for s in range(max(steps, 1)):
        step_start = t
        if steps:
            cpu.append(CpuEvent(f"ProfilerStep#{s}", "user_annotation", t, 0.0, 1, 1, ext, None, None, None, None,
                                None))
        for _ in range(rng.randrange(0, 6)):
            ext += stride
            op = rng.choice(["aten::addmm", "aten::mm", "aten::add", "aten::copy_", "triton_poi_fused_0"])
            t += rng.choice([0.5, 1.0, 2.25])
            tid = 1 if rng.random() < 0.97 else rng.choice([2, "worker"])  # another thread now and then
            cat = "cpu_op" if rng.random() < 0.9 else rng.choice(["user_annotation", "python_function"])
            cpu.append(CpuEvent(op, cat, t, rng.choice([30.0, 0.5]), 1, tid, ext if rng.random() < 0.95 else None,
                                None, None, None, None, None))
            for _ in range(rng.randrange(0, 3)):
                corr += stride
                t += rng.choice([0.0, 1.0, 3.5]) if rng.random() < 0.9 else -2.0
                rname = rng.choice(_RUNTIME)
                rts: float = t
                if odd and rng.random() < 0.1:
                    rts = float("nan")
                rdur: float = rng.choice([2.0, 5.5, 0.0])
                if odd and rng.random() < 0.05:
                    rdur = float("nan")
                c_id: int | None = corr if rng.random() < 0.95 else None
                runtime.append(RuntimeEvent(rname, rts, rdur, c_id, ext, 1))
                name = rng.choice(_NAMES)
                cat = "gpu_memset" if "Memset" in name else "gpu_memcpy" if "Memcpy" in name else "kernel"
                gts: Any = t + rng.choice([3.0, 10.0, 50.0])
                if odd and rng.random() < 0.08:
                    gts = int(gts)
                if odd and rng.random() < 0.05:
                    gts = float("nan")
                gcorr = c_id if rng.random() < 0.9 else corr + 10_000  # a kernel whose launch is not recorded
                gext = ext if rng.random() < 0.9 else None
                gpu.append(GpuEvent(name, cat, gts, rng.choice([1.0, 4.5, 20.0]), gcorr, gext, rng.choice(streams),
                                    0))
                if rng.random() < 0.1:  # a graph launch runs several kernels under one correlation
                    gpu.append(GpuEvent(name, cat, gts + 1.0, 2.0, gcorr, gext, streams[0], 0))
        t += rng.choice([5.0, 40.0])
        if steps:
            end = t if rng.random() < 0.9 else step_start  # an empty window sometimes
            cpu.append(CpuEvent(f"PyTorch Profiler marker {s}", "cpu_op", t, 0.0, 1, 1, None, None, None, None, None,
                                None))
            i = next(i for i, e in enumerate(cpu) if e.name == f"ProfilerStep#{s}")
            e = cpu[i]
            cpu[i] = CpuEvent(e.name, e.cat, e.ts, end - e.ts, 1, 1, e.external_id, None, None, None, None, None)
    if rng.random() < 0.3:
        gpu.sort(key=lambda g: (g.stream or 0, g.ts if g.ts == g.ts else 0.0))  # stream by stream: out of order
    cpu.sort(key=lambda e: (e.ts, -e.dur))
    if rng.random() < 0.2:
        runtime.reverse()  # not in time order
    return Trace(cpu=tuple(cpu), gpu=tuple(gpu), runtime=tuple(runtime), gpu_annotations=(), meta={},
                 device_properties=(), path="random", skipped_events=0, total_events=len(cpu) + len(gpu))


@pytest.mark.parametrize("seed", range(300))
def test_the_c_loops_equal_the_python_loops_or_decline_on_random_traces(seed: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    trace = _random_trace(rng)
    with K.cpu_names_kept(trace):
        for name, (native, python) in _each_loop(trace).items():
            if native is not None:
                _same(native, python, f"seed {seed} {name}")
        _same(_analysis(trace, False, monkeypatch), _analysis(trace, True, monkeypatch), f"seed {seed}")


def test_random_traces_meet_both_paths() -> None:
    """The random traces above reach every loop both ways: taken by C, and declined."""
    taken: dict[str, int] = {}
    declined: dict[str, int] = {}
    for seed in range(300):
        trace = _random_trace(random.Random(seed))
        with K.cpu_names_kept(trace):
            for name, (native, _) in _each_loop(trace).items():
                (taken if native is not None else declined)[name] = (taken if native is not None
                                                                    else declined).get(name, 0) + 1
    for name in ("instances", "tally", "busy", "windows", "top_level", "named set", "by_external_id"):
        assert taken.get(name, 0) >= 100, (name, taken, declined)
    for name in ("instances", "busy", "windows", "top_level"):
        assert declined.get(name, 0) >= 5, (name, taken, declined)


def test_records_of_another_type_are_declined() -> None:
    class Other:
        name, cat, ts, dur, correlation, external_id, stream = "k", "kernel", 1.0, 1.0, 1, 1, 7

    assert _fastan.kernel_instances([Other()], [], {}, {}, K._classify_key, [0.0], [9.0], GPU_MEMOP_CATS) is None
    assert _fastan.busy_per_iteration([Other()]) is None
    assert _fastan.tally([Other()], 1) is None
    assert _fastan.top_level([Other()]) is None
    assert _fastan.named([Other()], {"k"}) is None
    assert _fastan.by_external_id([Other()]) is None


def test_pure_analysis_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELSCOPE_PURE_ANALYSIS", "1")
    assert K.native_loops() is None
    monkeypatch.setenv("KERNELSCOPE_PURE_ANALYSIS", "0")
    assert K.native_loops() is _fastan
