"""benchmarks/gpu_contexts.py, the check that a worker waiting at its pre-gate holds no CUDA context: its summary
of the real H200 run (1B Llama, 9 workers; 2026-12-05), and its reading of /proc on a live process here."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time

from tests.conftest import ROOT, benchmark_module

RECORDED = ROOT / "benchmarks" / "results" / "h200-contexts-2026-12-05.json.gz"
RECORDED_0514 = ROOT / "benchmarks" / "results" / "h200-contexts-2026-12-05-0514.json.gz"


def test_the_recorded_h200_run():
    g = benchmark_module("gpu_contexts")
    data = json.loads(gzip.decompress(RECORDED.read_bytes()))
    s = g.summarize(data["samples"])
    assert s["nvidia_smi_ran"] and s["nvidia_smi_pids_match_workers"] and s["workers"] == 9
    # every worker waited at its pre-gate, none listed by nvidia-smi meanwhile; the later processes' second
    # wait (before the warm-up, their compiled model on the GPU) does hold one
    assert s["pre_gate"]["waits"] == 9 and s["pre_gate"]["with_context"] == 0 and s["pre_gate"]["seconds"] > 1000
    assert s["gate"] == {"waits": 6, "with_context": 6, "seconds": s["gate"]["seconds"]}
    # each worker's first context comes after its pre-gate wait ends
    for p in s["per_worker"].values():
        assert p["first_context"] is not None and p["first_context"] > p["waits"][0]["to"]
    # the driver's files were open while waiting: not a context (the first version of the script said so)
    waiting = [w for smp in data["samples"] for w in smp["workers"].values() if w["gate"] == "pre-gate"]
    assert waiting and all("/dev/nvidia0" in w["dev"] for w in waiting)


def test_the_recorded_h100_runs_after_the_pool_change():
    # Session 20's two pairs (an H100, code da92ebb): still no context while waiting for a turn, and no later
    # process waits on a child any more (the compile-worker pool's ~10 s sidecar, gone with compile_threads 1):
    # the one long wait is max-autotune's first compile on its workers
    g = benchmark_module("gpu_contexts")
    for stamp in ("1509", "1519"):
        path = ROOT / "benchmarks" / "results" / f"h100-contexts-2026-12-05-{stamp}.json.gz"
        s = g.summarize(json.loads(gzip.decompress(path.read_bytes()))["samples"])
        assert s["nvidia_smi_ran"] and s["nvidia_smi_pids_match_workers"] and s["workers"] == 9
        assert s["pre_gate"]["waits"] == 9 and s["pre_gate"]["with_context"] == 0
        assert s["gate"]["waits"] == 6 and s["gate"]["with_context"] == 6
        long = [w for w in s["waits_on_children"].values() if w["seconds"] > 5]
        assert len(long) == 1 and long[0]["seconds"] > 30


def test_it_sees_a_worker_at_its_gate(tmp_path):
    # a process whose command line names the worker module, blocked reading a FIFO named like the run's gates
    g = benchmark_module("gpu_contexts")
    gate = tmp_path / "pre-gate"
    os.mkfifo(gate)
    code = f"import sys; open({str(gate)!r}).read()  # kernelscope.capture.worker"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        with open(gate, "w") as writer:  # opening the write end lets the reader's open return; it then blocks
            for _ in range(200):
                s = g.sample(os.getpid(), time.monotonic())
                w = s["workers"].get(str(proc.pid))
                if w is not None and w["gate"] == "pre-gate":
                    break
                time.sleep(0.02)
            assert w is not None and w["gate"] == "pre-gate" and w["dev"] == []
            assert g.holds_context(str(proc.pid), s) is (None if s["apps"] is None else False)
            writer.write("go")
        proc.wait(timeout=30)
    finally:
        proc.kill()


def test_the_recorded_later_compiles_wait_on_a_child():
    # In both recorded 1B Llama runs, each of default's two later processes sat idle ~10 s of its compile from
    # the cache while one child ran at a full CPU (issue 27: the later compiles' latency); max-autotune's first
    # process waited longer on its compile workers, as any cold max-autotune compile does.
    g = benchmark_module("gpu_contexts")
    for path in (RECORDED, RECORDED_0514):
        data = json.loads(gzip.decompress(path.read_bytes()))
        waits = g.waits_on_children(data["samples"])
        assert waits == g.summarize(data["samples"])["waits_on_children"]
        ten = [w for w in waits.values() if 8 <= w["seconds"] <= 12]
        assert len(ten) == 2 and all(0.8 <= w["children_cpu_s"] / w["seconds"] <= 1.2 for w in ten)
        assert max(w["seconds"] for w in waits.values()) > 30  # max-autotune's first compile and its workers


def test_it_names_a_workers_children_and_its_wait_on_them(tmp_path):
    # a worker-like process that runs a busy child and waits for it, idle: its sample names the child's command
    # and waits_on_children counts the time
    g = benchmark_module("gpu_contexts")
    busy = "import time; t = time.time()\nwhile time.time() - t < 2.5: pass"
    code = (f"import subprocess, sys; subprocess.run([sys.executable, '-c', {busy!r}])"
            "  # kernelscope.capture.worker")
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", code])
    samples = []
    try:
        while proc.poll() is None:
            samples.append(g.sample(os.getpid(), t0))
            time.sleep(0.25)
    finally:
        proc.kill()
    named = [w["kids"] for smp in samples for w in smp["workers"].values() if w["kids"]]
    assert named and any("while time.time() - t < 2.5" in cmd for kids in named for cmd in kids)
    waits = g.waits_on_children(samples)
    assert list(waits) == [str(proc.pid)] and waits[str(proc.pid)]["seconds"] >= 1.0
