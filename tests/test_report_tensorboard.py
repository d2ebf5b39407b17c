"""TensorBoard scalars: one run per mode beside its trace, read back by tensorboard's own loader, no torch."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from kernelscope.errors import ResultError
from kernelscope.report.tensorboard import PREFIX, SUFFIX, run_folder, write_scalars
from kernelscope.result import to_json
from tests.conftest_reports import big_h200_211, seed_h200_211, seed_h200_2141


def read(run_dir: Path) -> dict[str, list[float]]:
    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_scalars_per_mode_read_back_by_tensorboard(tmp_path):
    result = seed_h200_211()
    write_scalars(result, tmp_path / "tb")
    assert sorted(p.name for p in (tmp_path / "tb").iterdir()) == ["default", "eager", "max-autotune"]
    default = read(tmp_path / "tb" / "default")
    assert default[PREFIX + "steady_latency_median_ms"] == [pytest.approx(0.15564800500869752, rel=1e-6)]
    assert default[PREFIX + "first_call_s"] == [pytest.approx(3.5900158159999975, rel=1e-6)]
    assert default[PREFIX + "kernels_per_iter"] == [3.0]
    assert read(tmp_path / "tb" / "max-autotune")[PREFIX + "kernels_per_iter"] == [2.0]
    # the event's time is the run's date, not the time of rendering
    acc = EventAccumulator(str(tmp_path / "tb" / "eager"))
    acc.Reload()
    assert acc.Scalars(PREFIX + "first_call_s")[0].wall_time == pytest.approx(1796223060.0)


def test_rewrite_replaces_our_file_and_leaves_others(tmp_path):
    run = tmp_path / "tb" / "eager"
    run.mkdir(parents=True)
    (run / "h200.1.pt.trace.json.gz").write_bytes(b"trace")  # the mode's trace lives here too
    write_scalars(big_h200_211(), tmp_path / "tb")
    write_scalars(big_h200_211(), tmp_path / "tb")
    names = sorted(p.name for p in run.iterdir())
    assert len([n for n in names if n.endswith(SUFFIX)]) == 1
    assert "h200.1.pt.trace.json.gz" in names
    assert not [n for n in names if n.startswith(".")]  # no staging folder left behind
    assert read(run)[PREFIX + "kernels_per_iter"] == [2.0]


def test_failed_modes_get_no_run(tmp_path):
    write_scalars(seed_h200_2141(), tmp_path / "tb")
    assert [p.name for p in (tmp_path / "tb").iterdir()] == ["max-autotune"]


def test_run_folder_is_the_one_holding_the_trace(tmp_path):
    # the capture stores "max-autotune:CPP"'s trace under tb/max-autotune_CPP/: the scalars go there too
    r = seed_h200_211()
    mode = dataclasses.replace(r.modes[2], name="max-autotune:CPP", trace="tb/max-autotune_CPP/k.1.pt.trace.json.gz")
    assert run_folder(tmp_path / "tb", mode) == tmp_path / "tb" / "max-autotune_CPP"
    # without a trace, the same folder-safe spelling
    assert run_folder(tmp_path / "tb", dataclasses.replace(mode, trace=None)) == tmp_path / "tb" / "max-autotune_CPP"


@pytest.mark.parametrize("name", ["../escape", "a/b", "a\\b", "x\0y"])
def test_mode_names_stay_inside_the_tb_folder(tmp_path, name):
    r = seed_h200_211()
    odd = dataclasses.replace(r, modes=(dataclasses.replace(r.modes[0], name=name, trace=None),))
    write_scalars(odd, tmp_path / "tb")
    (run,) = (tmp_path / "tb").iterdir()
    assert run.parent == tmp_path / "tb"
    assert not (tmp_path / "escape").exists()


@pytest.mark.parametrize(("name", "trace"), [("..", None), (".", None), ("", None), ("eager", "tb/../x.pt.trace.json")])
def test_mode_names_that_cannot_be_a_folder(tmp_path, name, trace):
    r = seed_h200_211()
    bad = dataclasses.replace(r, modes=(dataclasses.replace(r.modes[0], name=name, trace=trace),))
    with pytest.raises(ResultError):
        write_scalars(bad, tmp_path / "tb")


def test_written_without_importing_torch(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps(to_json(seed_h200_211())))
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from kernelscope.report.io import load_result\n"
        "from kernelscope.report.tensorboard import write_scalars\n"
        f"write_scalars(load_result(Path({str(tmp_path)!r})), Path({str(tmp_path / 'tb')!r}))\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "assert 'tensorflow' not in sys.modules, 'tensorflow was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert read(tmp_path / "tb" / "eager")[PREFIX + "kernels_per_iter"] == [3.0]


def test_profiler_plugin_still_loads_the_run(tmp_path):
    # GIVEN a mode's run folder with a real H200 trace, and our scalars written beside it
    from torch_tb_profiler import io as tb_io
    from torch_tb_profiler.profiler.loader import RunLoader

    trace = Path(__file__).parent / "data" / "h200-torch2.11" / "seed-default.trace.json.gz"
    run = tmp_path / "tb" / "default"
    run.mkdir(parents=True)
    (run / "h200.1.pt.trace.json.gz").write_bytes(trace.read_bytes())
    write_scalars(seed_h200_211(), tmp_path / "tb")
    assert len(list(run.glob(f"*{SUFFIX}"))) == 1
    # THEN torch-tb-profiler's own loader still reads the run: one worker, the trace views
    with tb_io.Cache() as cache:
        loaded = RunLoader("default", str(run), cache).load()
    assert loaded.workers == ["h200"]
    assert {v.name for v in loaded.views} >= {"overall", "operator", "kernel", "trace"}
