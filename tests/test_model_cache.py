"""The model built once per run and the float64 reference computed once (capture/model_cache.py), the later processes
of a round set up side by side and timed one at a time (capture/rounds.py): a loaded model is the fresh build bit
for bit, what cannot be shared is built in every worker with a note, held workers time alone and in order, and a
real run on the CPU builds its model once and computes its reference once (counted by the model file itself, not
timed)."""

from __future__ import annotations

import json
import time
import types
from pathlib import Path

import pytest
import torch

from kernelscope.capture import model_cache
from kernelscope.capture.rounds import Hold, Staged, groups, make_gate, together
from kernelscope.capture.setup import _build_point
from kernelscope.outdir import OWNED

from .conftest import ROOT, run_cli

SLOW = ROOT / "tests" / "models" / "slow_build.py"


def build(tmp_path: Path, model: Path = SLOW, sets: dict | None = None, point_sets: dict | None = None,
          dtype: str | None = None) -> tuple[torch.nn.Module, list, dict, torch.Tensor]:
    """One worker's _build_point on the CPU with the run's cache in tmp_path: (model, inputs, record, a draw
    from the generator right after)."""
    setup = types.SimpleNamespace(torch=torch, device="cpu", dtype=dtype, config={})
    spec = {"model": str(model), "sets": {"sleep_s": 0, "log": str(tmp_path / "count.txt"), **(sets or {})},
            "seed": 0, "dtype": dtype, "model_cache": str(tmp_path / model_cache.CACHE_DIR)}
    rec: dict = {"notes": []}
    m, inputs, _ = _build_point(setup, spec, {"sets": point_sets or {}, "input_index": None}, rec)  # type: ignore[arg-type]
    return m, inputs, rec, torch.rand(4)


def counted(tmp_path: Path, what: str) -> int:
    path = tmp_path / "count.txt"
    return path.read_text().split().count(what) if path.exists() else 0


def test_a_loaded_model_is_the_fresh_build_bit_for_bit(tmp_path: Path):
    fresh, x1, rec1, draw1 = build(tmp_path)
    state1 = {**dict(fresh.named_parameters()), **dict(fresh.named_buffers()), "offset": fresh.offset}
    loaded, x2, rec2, draw2 = build(tmp_path)
    assert counted(tmp_path, "build") == 1  # the second worker loaded it
    state2 = {**dict(loaded.named_parameters()), **dict(loaded.named_buffers()), "offset": loaded.offset}
    assert "scale" in state2 and "scale" not in loaded.state_dict()  # a non-persistent buffer came back too
    assert state1.keys() == state2.keys() and all(torch.equal(state1[k], state2[k]) for k in state1)
    assert torch.equal(x1[0], x2[0])  # get_inputs() drew after the weights: same draw
    assert torch.equal(draw1, draw2)  # the generator as the build left it
    assert rec1["notes"] == rec2["notes"] == []
    with torch.no_grad():
        assert torch.equal(fresh(*x1), loaded(*x2))


def test_each_setting_shape_point_dtype_and_device_has_its_own_model():
    spec = {"model": str(SLOW), "sets": {"sleep_s": 0}, "seed": 0, "dtype": None, "model_cache": "/c"}
    key = model_cache.entry_for(spec, {"sets": {}}, torch, "cpu")
    assert key == model_cache.entry_for(dict(spec), {"sets": {}, "input_index": 2}, torch, "cpu")
    others = [model_cache.entry_for({**spec, "sets": {"sleep_s": 1}}, {"sets": {}}, torch, "cpu"),
              model_cache.entry_for(spec, {"sets": {"sleep_s": 2}}, torch, "cpu"),
              model_cache.entry_for({**spec, "dtype": "bfloat16"}, {"sets": {}}, torch, "cpu"),
              model_cache.entry_for(spec, {"sets": {}}, torch, "cuda"),
              model_cache.entry_for({**spec, "seed": 1}, {"sets": {}}, torch, "cpu")]
    assert key is not None and len({key, *others}) == 6
    assert model_cache.entry_for({**spec, "distributed": {"nproc_per_node": 2}}, {"sets": {}}, torch, "cpu") is None
    assert model_cache.entry_for({**spec, "model_cache": None}, {"sets": {}}, torch, "cpu") is None
    assert model_cache.CACHE_DIR in OWNED  # a rerun into the folder removes a stopped run's copy


@pytest.mark.parametrize(("get_model", "why"), [
    ("global built\n    built = True\n    return torch.nn.Linear(4, 4)", "sets the model file's global 'built'"),
    ("torch.set_float32_matmul_precision('medium')\n    return torch.nn.Linear(4, 4)",
     "changes torch's float32 matmul precision (highest -> medium)"),
    ("m = torch.nn.Linear(4, 4)\n    m.act = lambda x: x\n    return m", "it could not be saved"),
    ("return torch.relu", None),  # a function: nothing to share, nothing to say
])
def test_what_cannot_be_shared_is_built_in_every_worker_with_a_note(tmp_path: Path, get_model: str, why: str):
    path = tmp_path / "m.py"
    path.write_text("import torch\nlog = ''\nsleep_s = 0\nbuilt = False\n"
                    f"def get_model():\n    open(log, 'a').write('build\\n')\n    {get_model}\n"
                    "def get_inputs():\n    return [torch.randn(2, 4)]\n")
    try:
        recs = [build(tmp_path, path)[2] for _ in range(2)]
    finally:
        torch.set_float32_matmul_precision("highest")
    assert counted(tmp_path, "build") == 2
    for rec in recs:
        if why is None:
            assert rec["notes"] == []
            continue
        (note,) = rec["notes"]
        assert note.startswith("the model is built in every process of this run, not once: ") and why in note


def test_a_model_or_inputs_built_off_the_cpu_are_not_shared():
    cpu = torch.nn.Linear(2, 2)
    assert model_cache._off_cpu(torch, cpu, {"x": [torch.ones(1)]}) is None
    assert model_cache._off_cpu(torch, cpu, {"x": [torch.ones(1, device="meta")]}) == \
        "the model file builds tensors on meta"
    assert model_cache._off_cpu(torch, torch.nn.Linear(2, 2, device="meta"), []) == \
        "the model file builds tensors on meta"


def test_a_rounds_workers_set_up_together_as_far_as_their_peaks_fit_in_half_the_memory():
    gib = 2**30
    assert groups([gib, gib, gib], 100 * gib) == [[0, 1, 2]]
    assert groups([20 * gib, 20 * gib, 20 * gib], 100 * gib) == [[0, 1], [2]]  # 21 GiB each: 2 fit in 50
    assert groups([gib, None, gib], 100 * gib) == [[0], [1], [2]]  # an unknown peak sets up alone
    assert groups([gib, gib], None) == [[0], [1]]
    assert groups([gib, gib, gib], 100 * gib, most=2) == [[0, 1], [2]]  # one per two CPUs on a 4-CPU machine


def test_held_workers_time_one_at_a_time_after_every_one_has_set_up(tmp_path: Path):
    # GIVEN three "workers" that set up for different times, then wait at their gates as the worker does
    events: list[str] = []

    def worker(i: int, setup_s: float):
        def start(hold):
            time.sleep(setup_s)
            events.append(f"ready {i}")
            with open(hold.gate) as f:
                assert f.read() == "go"
            events.append(f"time {i}")
            time.sleep(0.05)
            events.append(f"done {i}")
            return i
        return start

    gates = [tmp_path / f"gate{i}" for i in range(3)]
    assert all(make_gate(g) for g in gates)
    # WHEN they run together
    out = together([worker(0, 0.0), worker(1, 0.3), worker(2, 0.1)], gates)
    # THEN none times before all are ready, and each times alone, in order
    assert out == [0, 1, 2]
    assert sorted(events[:3]) == ["ready 0", "ready 1", "ready 2"]
    assert events[3:] == ["time 0", "done 0", "time 1", "done 1", "time 2", "done 2"]


def _staged_worker(events: list[str], name: str, setup_s: float):
    """A stand-in for a worker started ahead of its turn: sets up, waits at its pre gate, runs (a later process:
    compiles, then waits at its gate and times), as worker.py does."""
    def start(hold: Hold):
        events.append(f"setup {name}")
        time.sleep(setup_s)
        events.append(f"ready {name}")
        with open(hold.pre) as f:
            assert f.read() == "go"
        events.append(f"run {name}")
        if hold.gate is not None:
            events.append(f"ready-to-time {name}")
            with open(hold.gate) as f:
                assert f.read() == "go"
            events.append(f"time {name}")
        time.sleep(0.05)
        events.append(f"done {name}")
        return name
    return start


def test_staged_workers_set_up_together_and_each_runs_alone(tmp_path: Path):
    # GIVEN two first processes and two later ones, all started ahead of their turn, at most two setting up at once
    events: list[str] = []
    st = Staged(most=2)
    names = ["F1", "F2", "L1", "L2"]
    setup_s = {"F1": 0.3, "F2": 0.1, "L1": 0.2, "L2": 0.0}
    for name in names:
        pre = tmp_path / f"{name}.pre"
        gate = tmp_path / f"{name}.gate" if name.startswith("L") else None
        assert make_gate(pre) and (gate is None or make_gate(gate))
        st.add(_staged_worker(events, name, setup_s[name]), Hold(gate=gate, waits_for=4, pre=pre))
    # WHEN the parent runs them as profile does: first processes one at a time, then the later ones' compiles
    # together, then their timings one at a time
    out = []
    for i in (0, 1):
        st.settle()
        assert all(st.waiting(k) or not st.alive(k) for k in range(4))  # everyone idle before one goes on
        st.release(i)
        out.append(st.join(i))
    st.settle()
    for i in (2, 3):
        st.release(i)
    st.settle()
    assert st.waiting(2) and st.waiting(3)
    for i in (2, 3):
        st.release(i)
        out.append(st.join(i))
    st.stop()
    # THEN every worker set up before any ran, at most two at a time; each ran alone, in order
    assert out == names
    ready = [e for e in events if e.startswith("ready ")]
    first_run = events.index("run F1")
    assert len(ready) == 4 and all(events.index(r) < first_run for r in ready), events
    busy = 0
    for e in events[:first_run]:
        busy += 1 if e.startswith("setup ") else -1 if e.startswith("ready ") else 0
        assert busy <= 2, events
    after = events[first_run:]
    assert after[:4] == ["run F1", "done F1", "run F2", "done F2"], events
    assert sorted(after[4:8]) == ["ready-to-time L1", "ready-to-time L2", "run L1", "run L2"], events
    assert after[8:] == ["time L1", "done L1", "time L2", "done L2"], events


def test_a_staged_worker_polling_for_the_model_leaves_its_place_to_the_next(tmp_path: Path):
    # GIVEN one place to set up in, a builder, and a worker that polls for the builder's model file (as
    # model_cache.wait_saved does, its last progress line saying so)
    events: list[str] = []
    model = tmp_path / "model.pt"

    def builder(hold: Hold):
        events.append("builder starts")
        deadline = time.monotonic() + 10
        while "third starts" not in events and time.monotonic() < deadline:  # it saves the model once the third
            time.sleep(0.05)  # worker started (or after 10 s: the test fails then, it does not hang)
        events.append("builder saves")
        model.write_text("x")
        with open(hold.pre) as f:
            f.read()
        return "builder"

    def waiter(hold: Hold):
        hold.note_stage("waiting for the model (built once for this run)")
        while not model.exists():
            time.sleep(0.05)
        hold.note_stage("loading the model")
        with open(hold.pre) as f:
            f.read()
        return "waiter"

    def third(hold: Hold):
        events.append("third starts")
        with open(hold.pre) as f:
            f.read()
        return "third"

    st = Staged(most=2)
    for i, start in enumerate((builder, waiter, third)):
        pre = tmp_path / f"pre{i}"
        assert make_gate(pre)
        st.add(start, Hold(gate=None, waits_for=3, pre=pre))
    # WHEN the parent starts them: THEN the third starts while the waiter polls (with the waiter holding its place,
    # it could not start before the builder saved the model, and the builder waits for it: no progress)
    st.settle()
    assert events == ["builder starts", "third starts", "builder saves"]
    assert [st.join(i) for i in range(3) if not st.release(i)] == ["builder", "waiter", "third"]


def test_a_staged_workers_timeout_stops_while_it_waits_at_a_gate(tmp_path: Path):
    # GIVEN a worker's --timeout of 0.5 s that it spends waiting at its gate for 1 s (others' turns)
    pre = tmp_path / "pre"
    assert make_gate(pre)
    hold = Hold(gate=None, waits_for=1, pre=pre, budget_s=0.5)
    hold.deadline = time.monotonic() + 0.5
    st = Staged(most=None)
    st.add(lambda h: (open(h.pre).read(), h.current_deadline())[1], hold)
    st.settle()
    # THEN the clock stopped while it waited, and starts again, with the whole budget, when it is released
    assert hold.current_deadline() == float("inf")
    time.sleep(1.0)
    t0 = time.monotonic()
    st.release(0)
    assert t0 + 0.5 <= st.join(0) <= time.monotonic() + 0.5


def test_a_staged_workers_timeout_stops_while_it_polls_for_the_model():
    # GIVEN a worker started ahead with a 60 s --timeout for each stretch it runs
    hold = Hold(gate=None, waits_for=1, pre=Path("pre"), budget_s=60.0)
    hold.deadline = time.monotonic() + 60
    # WHEN it polls for the model's file, THEN its clock stops; once it goes on, it has its whole budget again
    hold.note_stage("waiting for the model (built once for this run)")
    assert hold.current_deadline() == float("inf")
    t0 = time.monotonic()
    hold.note_stage("loading the model (built once for this run)")
    assert t0 + 60 <= hold.current_deadline() <= time.monotonic() + 60
    hold.note_stage("waiting for its turn to run")  # the gate's own pause is the parent's (Staged.waiting)
    assert hold.current_deadline() <= time.monotonic() + 60


def test_the_reference_is_computed_once_per_point(tmp_path: Path):
    calls = []

    def compute():
        calls.append(1)
        return [torch.ones(2, dtype=torch.float64)], {"dtype": "float64", "device": "cpu"}

    for index in (None, None, 1):
        out, how = model_cache.shared_reference(torch, tmp_path, index, compute)
        assert torch.equal(out[0], torch.ones(2, dtype=torch.float64)) and how["dtype"] == "float64"
    assert len(calls) == 2  # once for get_inputs(), once for get_input_sweep()'s entry 1
    assert model_cache.shared_reference(torch, None, None, compute)[0] is not None and len(calls) == 3


@pytest.mark.slow
def test_a_run_builds_its_model_once_and_computes_its_reference_once(tmp_path: Path):
    # GIVEN a model whose get_model() sleeps 3 s and counts its calls, profiled as a user would: eager and default,
    # the default 3 processes each (6 workers; before, every one built the model, each on the critical path)
    count = tmp_path / "count.txt"
    # (--parallel-setup on: auto sets up one process at a time on 2 CPUs)
    proc = run_cli("profile", str(SLOW), "--device", "cpu", "--modes", "eager,default", "--repeats", "3",
                   "--warmup", "1", "--steps", "1", "--set", f"log={count}", "--out", str(tmp_path / "out"),
                   "--parallel-setup", "on")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # THEN it was built once (6 times before: once per worker) and its float64 reference computed once (twice
    # before: in each mode's first process); the later workers loaded it, and the copy is gone after the run
    assert counted(tmp_path, "build") == 1 and counted(tmp_path, "reference") == 1
    assert proc.stderr.count("loading the model (built once for this run)") == 5
    assert not (tmp_path / "out" / model_cache.CACHE_DIR).exists()
    assert not list((tmp_path / "out").rglob("gate"))
    # AND every process of the run started ahead of its turn: all six had set up (imported torch, read the
    # environment, loaded the model) and waited, idle, before the first one ran its reference; each first process
    # then ran alone (no other process printed a stage between its start and its end); the later processes
    # compiled side by side, then timed in the run's order, process 2 of each mode before process 3, each alone
    lines = [ln.split(" ", 2)[2] for ln in proc.stderr.splitlines() if ln.startswith("20") and "] " in ln]
    who = [ln.split("]", 1)[0] + "]" for ln in lines]
    turns = [i for i, ln in enumerate(lines) if ": waiting: waiting for its turn to" in ln and "to time" not in ln]
    assert len(turns) == 6 and max(turns) < min(i for i, ln in enumerate(lines) if "reference forward" in ln), lines
    for first in ("[1/2]", "[2/2]"):
        start = next(i for i, ln in enumerate(lines) if who[i] == first and "waiting took" in ln)
        end = next(i for i, ln in enumerate(lines) if who[i] == first and "finished in" in ln)
        assert set(who[start:end + 1]) == {first}, lines[start:end + 1]
    warm = [i for i, ln in enumerate(lines) if ": warm-up:" in ln and who[i].startswith("[process ")]
    assert [who[i] for i in warm] == ["[process 2/3, 1/2]", "[process 2/3, 2/2]", "[process 3/3, 1/2]",
                                      "[process 3/3, 2/2]"], lines
    for i in warm:  # from its warm-up to its end, no other process printed a stage
        end = next(k for k in range(i, len(lines)) if who[k] == who[i] and "finished in" in lines[k])
        assert set(who[i:end + 1]) == {who[i]}, lines[i:end + 1]
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    for m in result["modes"]:
        assert m["status"] == "ok" and m["latency_ms"]["processes"] == 3
        assert m["numerics"]["vs_reference"]["pass"] is True
        assert not any("built in every process" in n for n in m["notes"])


def test_processes_start_ahead_with_auto_only_where_they_fit(tmp_path: Path):
    from kernelscope.run.profile import STAGED_MOST, _room_for

    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20971520 kB\n")
    # 20 GiB available: 10 processes of 1 GiB fit in half of it, 11 do not; never more than STAGED_MOST
    assert _room_for(10, str(meminfo)) and not _room_for(11, str(meminfo))
    meminfo.write_text("MemAvailable:   1073741824 kB\n")
    assert _room_for(STAGED_MOST, str(meminfo)) and not _room_for(STAGED_MOST + 1, str(meminfo))
    assert not _room_for(2, str(tmp_path / "none"))  # no /proc/meminfo: one after another
