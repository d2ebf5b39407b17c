"""benchmarks/h200_proofs.py's report, the instrument issue 27's last condition is read by, over a real proof: the
H100 lease of 2026-12-05 17:40 (three `kernelscope profile` runs of the seed sample and two hand runs beside
them; tests/data/h100-torch2.11-busy-host). What the device printed for it is what these tests recompute."""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
from pathlib import Path

import pytest

from tests.conftest import benchmark_module

DATA = Path(__file__).parent / "data" / "h100-torch2.11-busy-host"


@pytest.fixture(scope="module")
def proof(tmp_path_factory) -> tuple[dict, str]:
    out = tmp_path_factory.mktemp("proof")
    for i in (1, 2, 3):
        (out / f"run-{i}").mkdir()
        shutil.copy(DATA / f"run-{i}" / "result.json", out / f"run-{i}" / "result.json")
    for name in ("hand-1.json", "hand-2.json", "walls.json"):
        shutil.copy(DATA / name, out / name)
    benchmark_module("h200_proofs").report(argparse.Namespace(out=str(out)))
    return json.loads((out / "proofs.json").read_text()), (out / "proofs.md").read_text()


def test_the_bar_as_the_device_printed_it(proof):
    data, md = proof
    assert data["modes"]["eager"]["runs_holding_all"] == 1 and data["modes"]["default"]["runs_holding_all"] == 3
    assert all(p["changes"] == {"eager": "none", "default": "none"} for p in data["pairs"])
    assert "| eager | 0.0374, 0.0503, 0.0515 |" in md


def test_the_hand_control_counts_its_own_runs_with_kernelscopes_formula(proof):
    from kernelscope.analysis.stats import rerun_interval

    data, md = proof
    hands = [json.loads((DATA / f"hand-{i}.json").read_text()) for i in (1, 2)]
    ivs = [rerun_interval(h["modes"]["eager"]["per_process_ms"], [r["samples"] for r in h["runs"]["eager"]])
           for h in hands]
    meds = [h["modes"]["eager"]["median_ms"] for h in hands]  # 0.036 then 0.0545: the host's step
    held = sum(ivs[i][0] <= meds[1 - i] <= ivs[i][1] for i in (0, 1))
    assert held == data["modes"]["eager"]["hand_runs_holding_all"] == 1 and data["modes"]["eager"]["hand_runs"] == 2
    assert data["modes"]["default"]["hand_runs_holding_all"] == 2
    assert "hand runs whose interval holds every other hand run's median | 1 of 2" in md


def test_each_runs_host_state_and_the_bar_within_a_state(proof):
    data, md = proof
    for mode in ("eager", "default"):
        assert data["modes"][mode]["host_states"] == ["quiet", "busy", "busy"]
        assert data["modes"][mode]["host_holding"] == {"quiet": [1, 1], "busy": [2, 2]}
    assert "| eager | quiet, busy, busy | quiet: 1 of 1; busy: 2 of 2 |" in md


def test_later_processes_against_the_first(proof):
    data, _ = proof
    pp = data["modes"]["eager"]["per_process"]
    want = math.exp(statistics.mean(math.log(p[1] / p[0]) for p in pp))
    assert data["modes"]["eager"]["later_vs_first"]["2"] == pytest.approx(want)
    assert set(data["modes"]["eager"]["later_vs_first"]) == {"2", "3"}


def test_a_lease_recorded_before_the_drift_reads_both_ways(proof, tmp_path):
    # The busy lease: the drift moves no run across the bar (a host 1.34x slower is not drift).
    data, md = proof
    assert data["modes"]["eager"]["runs_holding_all_now"] == 1
    assert data["modes"]["default"]["runs_holding_all_now"] == 3
    # The quiet lease of 19:30 (tests/data/h100-torch2.11-quiet-proofs): recorded 3 of 5 for default, 5 of 5 with
    # this code's intervals; both are printed.
    quiet = Path(__file__).parent / "data" / "h100-torch2.11-quiet-proofs"
    for i in range(1, 6):
        (tmp_path / f"run-{i}").mkdir()
        shutil.copy(quiet / f"run-{i}" / "result.json", tmp_path / f"run-{i}" / "result.json")
        shutil.copy(quiet / f"hand-{i}.json", tmp_path / f"hand-{i}.json")
    shutil.copy(quiet / "walls.json", tmp_path / "walls.json")
    benchmark_module("h200_proofs").report(argparse.Namespace(out=str(tmp_path)))
    q = json.loads((tmp_path / "proofs.json").read_text())
    assert [q["modes"][m]["runs_holding_all"] for m in ("eager", "default")] == [4, 3]
    assert [q["modes"][m]["runs_holding_all_now"] for m in ("eager", "default")] == [4, 5]
    assert "- default: 5 of 5 (" in (tmp_path / "proofs.md").read_text()
