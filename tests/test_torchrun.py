"""`profile --nproc` under torchrun on the CPU with gloo: a tensor-parallel MLP, a DDP-wrapped MLP (swept
over two batch sizes) and an FSDP2-sharded training step on 2 ranks, one rank with --nproc 1; `upgrade-check
--nproc 2`; `analyze DIR` of the rank traces; the rank traces read by torch-tb-profiler's loader as one distributed
run and by HTA's rank rule; the overlap computation by hand.

The real NCCL run (2 GPUs) is not here: it needs the 2-GPU machine (README, "Several GPUs (torchrun)").
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kernelscope.analysis.comm import intersection_length, overlap, union
from kernelscope.analysis.ranks import combine_ranks, rank_trace_files, trace_rank
from kernelscope.capture.runner import torchrun_argv
from kernelscope.capture.torchrun import rendezvous_args
from kernelscope.cli import _register, cli
from kernelscope.errors import UsageError
from kernelscope.report.check import violation_text
from kernelscope.report.words import say
from kernelscope.result import (
    SCHEMA,
    Communication,
    GemmEpilogue,
    LatencyStats,
    ModeResult,
    RankResult,
    RunEnvironment,
    RunResult,
    TimelineEntry,
    run_from_json,
)
from kernelscope.result_file import result_from_json

from .conftest import run_cli, run_cli_isolated


def _invoke(args: list[str]):
    _register()
    return CliRunner().invoke(cli, args)


FAST = ("--device", "cpu", "--processes", "1", "--repeats", "5", "--warmup", "3", "--steps", "2")


def _profile(tmp_path_factory: pytest.TempPathFactory, model: str, nproc: int, modes: str = "eager",
             *extra: str) -> Path:
    out = tmp_path_factory.mktemp(f"torchrun-{Path(model).stem}-{nproc}") / "run"
    proc = run_cli("profile", model, "--nproc", str(nproc), "--modes", modes, *FAST, *extra, "--out", str(out))
    if out.is_dir():
        (out / "cli-stderr.txt").write_text(proc.stderr)
        (out / "cli-stdout.txt").write_text(proc.stdout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def tp_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _profile(tmp_path_factory, "tests/models/tp_mlp.py", 2)


@pytest.fixture(scope="session")
def ddp_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Swept over two batch sizes: every shape point has its own ranks."""
    return _profile(tmp_path_factory, "tests/models/ddp_mlp.py", 2, "eager", "--sweep", "batch_size=8,16")


@pytest.fixture(scope="session")
def fsdp_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _profile(tmp_path_factory, "tests/models/fsdp_mlp.py", 2)


def _mode(run: Path, name: str = "eager") -> dict:
    return next(m for m in json.loads((run / "result.json").read_text())["modes"] if m["name"] == name)


def _dist_info(trace: Path) -> dict:
    return json.loads(gzip.decompress(trace.read_bytes()))["distributedInfo"]


# --------------------------------------------------------------------------------------- tensor parallel, 2 ranks
@pytest.mark.slow
def test_tp_one_trace_per_rank_with_distinct_ranks(tp_run: Path):
    traces = sorted((tp_run / "tb" / "eager").glob("kernelscope_rank_*.pt.trace.json.gz"))
    assert [t.name.split(".")[0] for t in traces] == ["kernelscope_rank_0", "kernelscope_rank_1"]
    infos = [_dist_info(t) for t in traces]
    assert [(i["rank"], i["world_size"], i["backend"]) for i in infos] == [(0, 2, "gloo"), (1, 2, "gloo")]
    for r in (0, 1):
        rec = json.loads((tp_run / "modes" / "eager" / f"rank-{r}" / "capture.json").read_text())
        assert rec["status"] == "ok" and rec["rank"] == r
        assert rec["distributed"] == {"rank": r, "world_size": 2, "local_rank": r, "backend": "gloo"}
        assert rec["log"] == f"modes/eager/rank-{r}/log.txt"
    group = json.loads((tp_run / "modes" / "eager" / "capture.json").read_text())
    assert group["rank_records"] == ["modes/eager/rank-0/capture.json", "modes/eager/rank-1/capture.json"]


@pytest.mark.slow
def test_tp_ranks_in_result(tp_run: Path):
    m = _mode(tp_run)
    assert m["status"] == "ok" and m["world_size"] == 2
    assert [r["rank"] for r in m["ranks"]] == [0, 1]
    for r in m["ranks"]:
        assert r["status"] == "ok" and r["latency_ms"] > 0 and r["peak_memory_bytes"] > 0
        # fc1: addmm + separate gelu; fc2: mm without bias (added after the all_reduce), the c10d op besides
        assert r["kernels_per_iter"] == 5
        assert r["verdicts"] == ["fc1: partial", "fc2: none"]
        assert r["differs"] == []
    assert m["ranks_differ"] == []


@pytest.mark.slow
def test_tp_communication_category_and_overlap(tp_run: Path):
    m = _mode(tp_run)
    assert m["kernels_by_category"]["communication"] == 1
    assert any(k["name"] == "c10d::allreduce_" and k["category"] == "communication" for k in m["kernels"])
    for r in m["ranks"]:
        c = r["communication"]
        assert c["time_us_per_iter"] > 0 and c["source"] == "gloo ranges" and c["names"] == ["gloo:all_reduce"]
        assert 0.0 <= c["overlap_fraction"] <= 1.0
        assert c["overlap_us_per_iter"] <= c["time_us_per_iter"]
    assert m["communication"] == m["ranks"][m["slowest_rank"]]["communication"]


@pytest.mark.slow
def test_tp_headline_is_the_slowest_rank(tp_run: Path):
    m = _mode(tp_run)
    lat = [r["latency_ms"] for r in m["ranks"]]
    slowest = lat.index(max(lat))
    assert m["slowest_rank"] == slowest and m["ranks"][slowest]["slowest"] is True
    assert m["latency_ms"]["median"] == pytest.approx(max(lat))
    assert m["rank_skew"] == pytest.approx(max(lat) / min(lat))
    assert any(n["code"] == "slowest-rank" and n["args"]["slowest"] == slowest for n in m["findings"])


@pytest.mark.slow
def test_tp_result_loads_typed_and_reports_show_ranks(tp_run: Path):
    run = run_from_json(json.loads((tp_run / "result.json").read_text()))
    m = run.mode("eager")
    assert isinstance(m.ranks[0], RankResult) and isinstance(m.ranks[0].communication, Communication)
    md = (tp_run / "summary.md").read_text()
    assert "### Ranks: eager (2 ranks)" in md and "| 0 | ok |" in md.replace(" (slowest)", "")
    html = (tp_run / "report.html").read_text()
    assert 'id="ranks"' in html and "Communication / iter" in html
    out = (tp_run / "cli-stdout.txt").read_text()
    assert "eager ranks" in out and "rank 0" in out and "of the profiled iteration" in out


@pytest.mark.slow
def test_tp_analyze_dir_reproduces_ranks(tp_run: Path, tmp_path: Path):
    res = _invoke(["analyze", str(tp_run / "tb" / "eager"), "--out", str(tmp_path / "an")])
    assert res.exit_code == 0, res.output
    got = _mode(tmp_path / "an", "trace")
    want = _mode(tp_run)
    assert got["world_size"] == 2
    for g, w in zip(got["ranks"], want["ranks"], strict=True):
        assert g["rank"] == w["rank"] and g["kernels_per_iter"] == w["kernels_per_iter"]
        assert g["verdicts"] == w["verdicts"] and g["communication"] == w["communication"]
        assert g["trace"].endswith(Path(w["trace"]).name)
    assert [r for r, _ in rank_trace_files(tp_run / "tb" / "eager")] == [0, 1]


@pytest.mark.slow
def test_tp_check_per_rank(tp_run: Path):
    res = _invoke(["check", str(tp_run), "--mode", "eager", "--max-kernels-per-iter", "4"])
    assert res.exit_code == 1
    other = 1 - _mode(tp_run)["slowest_rank"]
    assert f"eager rank {other}: 5 kernels per iteration > 4" in res.output
    res = _invoke(["check", str(tp_run), "--mode", "eager", "--max-kernels-per-iter", "5"])
    assert res.exit_code == 0, res.output


@pytest.mark.slow
def test_tp_compare_matches_ranks(tp_run: Path, tmp_path: Path):
    res = _invoke(["compare", str(tp_run), str(tp_run), "--out", str(tmp_path / "cmp")])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    (mode,) = data["modes"]
    assert [r["rank"] for r in mode["ranks"]] == [0, 1]
    assert all(r["ratio"] == pytest.approx(1.0) and r["verdicts_changed"] == [] for r in mode["ranks"])
    assert "### Ranks: eager" in (tmp_path / "cmp" / "compare.md").read_text()
    # compare.html shows the same per-rank rows: both ranks, one-way change, no verdict change
    html = (tmp_path / "cmp" / "compare.html").read_text()
    section = html[html.index('<section id="ranks">'):html.index('<section id="failures">')]
    assert section.count("<tr><td>") == 2 and "<h3>eager</h3>" in section
    assert "0.x" not in section and ("same speed" in section or "×" in section)


# ---------------------------------------------------------------------------- upgrade-check --nproc 2, 2 ranks
@pytest.fixture(scope="session")
def upgrade_ranks(torch_only_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The TP MLP before (a venv with torch and no kernelscope: the shipped worker under torchrun) and after (this
    interpreter), 2 gloo ranks per side."""
    out = tmp_path_factory.mktemp("upgrade-ranks") / "out"
    proc = run_cli_isolated("upgrade-check", "tests/models/tp_mlp.py", "--before", str(torch_only_python),
                            "--nproc", "2", "--modes", "eager", *FAST, "--no-tensorboard", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (out.parent / "stdout.txt").write_text(proc.stdout)
    return out


@pytest.mark.slow
def test_upgrade_check_per_rank(upgrade_ranks: Path, torch_only_python: Path):
    for side in ("before", "after"):
        result = json.loads((upgrade_ranks / side / "result.json").read_text())
        assert result["settings"]["nproc"] == 2 and result["settings"]["torchrun_args"] == ["--standalone"]
        (m,) = result["modes"]
        assert m["status"] == "ok" and m["world_size"] == 2 and [r["rank"] for r in m["ranks"]] == [0, 1]
        assert all(r["verdicts"] == ["fc1: partial", "fc2: none"] for r in m["ranks"])
        traces = sorted((upgrade_ranks / side / "tb" / "eager").glob("kernelscope_rank_*.pt.trace.json.gz"))
        assert [_dist_info(t)["rank"] for t in traces] == [0, 1]
    before = json.loads((upgrade_ranks / "before" / "result.json").read_text())
    assert before["environment"]["interpreter"]["path"] == str(torch_only_python)
    assert (upgrade_ranks / "before" / "worker" / "kernelscope_worker.py").is_file()  # shipped, run by torchrun
    (mode,) = json.loads((upgrade_ranks / "compare.json").read_text())["modes"]
    assert [r["rank"] for r in mode["ranks"]] == [0, 1]
    for r in mode["ranks"]:
        assert r["before"]["median_ms"] > 0 and r["after"]["median_ms"] > 0
        assert r["ratio"] == pytest.approx(r["after"]["median_ms"] / r["before"]["median_ms"])
        assert r["verdicts_changed"] == [] and r["fusion_lost"] == []
    after = json.loads((upgrade_ranks / "after" / "result.json").read_text())
    slowest = (before["modes"][0]["slowest_rank"], after["modes"][0]["slowest_rank"])
    assert mode["summary"].endswith(f"2 ranks, figures of the slowest (rank {slowest[0]} → rank {slowest[1]})")
    md = (upgrade_ranks / "compare.md").read_text()
    assert "### Ranks: eager" in md and "| rank | latency before → after |" in md
    html = (upgrade_ranks / "compare.html").read_text()
    section = html[html.index('<section id="ranks">'):html.index('<section id="failures">')]
    assert section.count("<td>0</td>") == 1 and section.count("<td>1</td>") == 1 and "0.x" not in section
    res = _invoke(["check", str(upgrade_ranks), "--max-regression", "1000", "--max-kernels-per-iter", "5",
                   "--mode", "eager"])
    assert res.exit_code == 0, res.output


def test_upgrade_rank_that_fused_less_is_a_regression():
    """Rank 1 lost fusion after the upgrade while the headline (slowest, rank 0 on both sides) did not."""
    from kernelscope.analysis.check import check_upgrade
    from kernelscope.analysis.upgrade import compare_upgrade
    from kernelscope.report.upgrade import upgrade_data

    def run(verdict_rank1: str) -> RunResult:
        mode = combine_ranks([_mode_result(2.0, verdict="fused"), _mode_result(1.0, verdict=verdict_rank1)])
        return RunResult(schema=SCHEMA, tool_version="0", created="", command="", model="m",
                         device="cpu", dtype="float32", environment=RunEnvironment(), modes=(mode,))

    cmp = compare_upgrade(run("fused"), run("partial"))
    (m,) = cmp.modes
    assert m.rank_fusion_lost == ((1, "fc1: fused -> partial"),)
    assert [say(r) for r in m.regressions] == ["fusion lost on rank 1"]
    data = upgrade_data(cmp)
    assert data["verdict"] == "regression" and data["modes"][0]["ranks"][1]["fusion_lost"] == ["fc1: fused -> partial"]
    (v,) = check_upgrade(cmp, 10.0).violations
    assert (v.rule, v.mode, violation_text(v)) == ("--max-regression", "eager rank 1",
                                                   "GEMM fc1: fused → partial after the upgrade")
    # the same loss on the headline rank is the mode's own GEMM row, not repeated per rank
    same = compare_upgrade(run("fused"), run("fused"))
    assert same.modes[0].rank_fusion_lost == () and same.modes[0].regressions == ()


# ------------------------------------------------------------------------------------ DDP, 2 ranks, 2 shapes
POINTS = (("p0-batch_size-8", "batch_size=8", 8), ("p1-batch_size-16", "batch_size=16", 16))


@pytest.mark.slow
def test_ddp_two_ranks(ddp_run: Path):
    m = _mode(ddp_run)  # the first shape point's
    assert m["status"] == "ok" and m["world_size"] == 2 and len(m["ranks"]) == 2
    traces = sorted((ddp_run / "tb" / POINTS[0][0] / "eager").glob("kernelscope_rank_*.pt.trace.json.gz"))
    assert sorted(_dist_info(t)["rank"] for t in traces) == [0, 1]
    for r in m["ranks"]:
        # DDP's module paths: the model file wrapped the model after the process group was up
        assert r["verdicts"] == ["module.0: partial", "module.2: fused"] and r["kernels_per_iter"] == 3
        # a forward under no_grad syncs no buffers after the first call: no collective in the profiled steps
        assert r["communication"] is None
    assert m["ranks_differ"] == []


@pytest.mark.slow
def test_sweep_has_ranks_at_every_shape_point(ddp_run: Path):
    result = json.loads((ddp_run / "result.json").read_text())
    assert [p["label"] for p in result["points"]] == [label for _, label, _ in POINTS]
    for (dirname, label, batch), point in zip(POINTS, result["points"], strict=True):
        (m,) = point["modes"]
        assert m["status"] == "ok" and m["world_size"] == 2 and [r["rank"] for r in m["ranks"]] == [0, 1]
        for r in m["ranks"]:
            assert r["latency_ms"] > 0 and r["kernels_per_iter"] == 3
            assert r["trace"].startswith(f"tb/{dirname}/eager/kernelscope_rank_{r['rank']}.")
            assert r["capture"] == f"points/{dirname}/modes/eager/rank-{r['rank']}/capture.json"
            rec = json.loads((ddp_run / r["capture"]).read_text())
            assert rec["rank"] == r["rank"] and rec["point"]["label"] == label
            assert rec["inputs"] == f"{batch}x64"
        assert m["latency_ms"]["median"] == max(r["latency_ms"] for r in m["ranks"])
    md = (ddp_run / "summary.md").read_text()
    html = (ddp_run / "report.html").read_text()
    out = (ddp_run / "cli-stdout.txt").read_text()
    for dirname, label, _ in POINTS:
        assert f"### Ranks: eager @ {label} (2 ranks)" in md
        assert f"<h3>eager @ {label}: 2 ranks</h3>" in html
        assert f"eager @ {label} ranks" in out
        assert f'href="tb/{dirname}/eager/kernelscope_rank_1.' in html  # each rank's own trace


# ------------------------------------------------------------------------------ FSDP2, 2 ranks, a training step
@pytest.mark.slow
def test_fsdp_training_step(fsdp_run: Path):
    m = _mode(fsdp_run)
    assert m["status"] == "ok" and m["world_size"] == 2 and [r["rank"] for r in m["ranks"]] == [0, 1]
    # FSDP2 on gloo: an all_gather per layer before its forward and again before its backward, a reduce_scatter
    # per layer after it (gloo runs the reduce_scatter as an all_reduce on its thread)
    comm = {k["name"]: k["calls_per_iter"] for k in m["kernels"] if k["category"] == "communication"}
    assert comm == {"c10d::_allgather_base_": 4, "c10d::_reduce_scatter_base_": 2}
    assert m["kernels_by_category"]["communication"] == 6
    for r in m["ranks"]:
        assert r["status"] == "ok" and r["latency_ms"] > 0 and r["kernels_per_iter"] == m["kernels_per_iter"]
        c = r["communication"]
        assert c["source"] == "gloo ranges" and c["names"] == ["gloo:all_gather", "gloo:all_reduce"]
        assert c["kernels_per_iter"] == 6 and c["time_us_per_iter"] > 0 and 0 <= c["overlap_fraction"] <= 1
        # forward GEMMs by module (the model file wrapped them after the process group was up), then the
        # backward's weight and input gradients
        assert r["verdicts"][:2] == ["model.fc1: partial", "model.fc2: fused"] and len(r["verdicts"]) == 5
        assert (fsdp_run / "modes" / "eager" / f"rank-{r['rank']}" / "capture.json").is_file()
    # FSDP refuses deepcopy: the float64 reference is skipped with the reason, not failed
    assert "FSDP does not support deepcopy" in m["numerics"]["reference"]["skipped"]


# ----------------------------------------------- the rank traces in torch-tb-profiler's distributed view and HTA
_TB_LOADER = """
import json, sys, tempfile
from torch_tb_profiler import io
from torch_tb_profiler.profiler.loader import RunLoader
from torch_tb_profiler.run import DistributedRunProfile

def main():
    with tempfile.TemporaryDirectory() as cache:
        run = RunLoader("eager", sys.argv[1], io.Cache(cache)).load()
        dist = [p for p in run.profiles.values() if isinstance(p, DistributedRunProfile)]
        out = {"workers": run.workers, "distributed": [
            {"worker": p.worker, "overlap_workers": sorted(p.steps_to_overlap["data"]["all"]),
             "comm_ops": {w: sorted(row[0] for row in t["rows"]) for w, t in p.comm_ops["data"].items()}}
            for p in dist]}
    print(json.dumps(out))

if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
def test_tb_profiler_loads_the_rank_traces_as_one_distributed_run(fsdp_run: Path, tmp_path: Path):
    """torch-tb-profiler (a dependency) names a worker by the file name before ``.<span>.pt.trace.json.gz`` and
    groups the workers of a run folder into its Distributed view when each has gloo:/nccl: collectives (its
    loader spawns a process per worker: run in a script of its own)."""
    import subprocess
    import sys

    tb = fsdp_run / "tb" / "eager"
    script = tmp_path / "load.py"
    script.write_text(_TB_LOADER)
    proc = subprocess.run([sys.executable, str(script), str(tb)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    workers = ["kernelscope_rank_0", "kernelscope_rank_1"]
    assert got["workers"] == ["All", *workers]
    (dist,) = got["distributed"]
    assert dist["worker"] == "All" and dist["overlap_workers"] == workers
    assert dist["comm_ops"] == {w: ["gloo:all_gather", "gloo:all_reduce"] for w in workers}


@pytest.mark.slow
def test_rank_traces_follow_htas_rank_rule(tp_run: Path, fsdp_run: Path):
    """HTA's ``TraceAnalysis(trace_dir=tb/<mode>)`` reads EVERY *.json and *.gz file of the folder and refuses one
    without an int ``distributedInfo.rank`` (hta/common/trace_file.py, create_rank_to_trace_dict); ranks must be
    unique. Checked here by that rule; with HTA installed (pip install -e '.[bench]') by HTA itself too."""
    for tb in (tp_run / "tb" / "eager", fsdp_run / "tb" / "eager"):
        files = [p for p in tb.iterdir() if p.name.endswith((".gz", ".json"))]
        ranks = sorted(_dist_info(p)["rank"] for p in files)
        assert ranks == [0, 1], files
        try:
            from hta.trace_analysis import TraceAnalysis
        except ImportError:
            continue
        assert sorted(TraceAnalysis(trace_dir=str(tb)).t.traces) == [0, 1]


# ------------------------------------------------------------------------------------------------ one rank
@pytest.mark.slow
def test_nproc_1_with_rendezvous_options(tmp_path_factory: pytest.TempPathFactory):
    """One rank, through the multi-host options (a c10d rendezvous on this host) instead of --standalone."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rdzv = ("--nnodes", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "ks")
    run = _profile(tmp_path_factory, "tests/models/tp_mlp.py", 1, "eager", *rdzv)
    assert json.loads((run / "result.json").read_text())["settings"]["torchrun_args"] == list(rdzv)
    m = _mode(run)
    assert m["status"] == "ok" and m["world_size"] == 1 and [r["rank"] for r in m["ranks"]] == [0]
    (trace,) = (run / "tb" / "eager").glob("kernelscope_rank_0.*.pt.trace.json.gz")
    assert _dist_info(trace)["world_size"] == 1 and trace_rank(trace) == 0
    assert m["communication"] is None  # world size 1: the model file skips its all_reduce
    assert m["slowest_rank"] == 0 and m["rank_skew"] == pytest.approx(1.0)


@pytest.mark.slow
def test_two_hosts_simulated_on_one(tmp_path: Path):
    """The multi-host options as the README gives them, two "hosts" on this one: two kernelscope runs at once, one
    rank each, meeting in a c10d rendezvous (--node-rank is static-rendezvous only: c10d hands out the ranks).
    With --processes 2 every process is a new torchrun group on the same endpoint and id. The tensor-parallel
    MLP's all_reduce crosses the hosts; each host's result holds the rank that ran on it."""
    import socket
    import subprocess
    import sys

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    procs = []
    for node in (0, 1):
        args = ["profile", "tests/models/tp_mlp.py", "--nproc", "1", "--nnodes", "2", "--node-rank", str(node),
                "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "two-hosts",
                "--modes", "eager", "--device", "cpu", "--processes", "2", "--repeats", "5", "--warmup", "3",
                "--steps", "2", "--out", str(tmp_path / f"h{node}")]
        procs.append(subprocess.Popen([sys.executable, "-m", "kernelscope", *args], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent))
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    held = []
    for node in (0, 1):
        m = _mode(tmp_path / f"h{node}")
        assert m["status"] == "ok" and m["world_size"] == 2 and len(m["ranks"]) == 1
        (r,) = m["ranks"]
        held.append(r["rank"])
        assert r["capture"] == f"modes/eager/rank-{r['rank']}/capture.json"
        assert r["communication"]["time_us_per_iter"] > 0  # the all_reduce between the two hosts
        assert m["latency_ms"]["processes"] == 2
        (trace,) = (tmp_path / f"h{node}" / "tb" / "eager").glob("kernelscope_rank_*.pt.trace.json.gz")
        assert _dist_info(trace)["rank"] == r["rank"] and _dist_info(trace)["world_size"] == 2
        assert "1 of 2 ranks ran on this host" in (tmp_path / f"h{node}" / "summary.md").read_text()
    assert sorted(held) == [0, 1]


@pytest.mark.slow
def test_tp_compiled_default(tmp_path_factory: pytest.TempPathFactory):
    """Inductor compiles the all_reduce into the graph (_c10d_functional.all_reduce_ + wait_tensor)."""
    run = _profile(tmp_path_factory, "tests/models/tp_mlp.py", 2, modes="default")
    m = _mode(run, "default")
    assert m["status"] == "ok" and len(m["ranks"]) == 2
    names = {k["name"] for k in m["kernels"] if k["category"] == "communication"}
    assert names == {"c10d::allreduce_", "_c10d_functional::wait_tensor"}
    for r in m["ranks"]:
        assert r["communication"]["time_us_per_iter"] > 0 and 0 <= r["communication"]["overlap_fraction"] <= 1
        code = (run / "modes" / "default" / f"rank-{r['rank']}" / "code" / "graph_0.py").read_text()
        assert "torch.ops._c10d_functional.all_reduce_.default" in code


# ----------------------------------------------------------------------------------------- pure units
@pytest.mark.parametrize("comm, compute, want", [
    ([(0, 10)], [], (10, 0)),
    ([(0, 10)], [(2, 4), (6, 8)], (10, 4)),
    ([(0, 10), (5, 15)], [(12, 20)], (15, 3)),  # overlapping collectives count once
    ([(0, 10)], [(0, 3), (2, 5), (20, 30)], (10, 5)),  # nested/overlapping compute counts once
    ([(10, 20)], [(0, 5), (25, 30)], (10, 0)),
    ([(0, 4), (6, 10)], [(3, 7)], (8, 2)),
    ([(5, 5)], [(0, 10)], (0, 0)),  # an empty interval is no time
])
def test_overlap_by_hand(comm, compute, want):
    assert overlap(comm, compute) == want


def test_union_and_intersection():
    assert union([(5, 7), (0, 2), (1, 3), (7, 8)]) == [(0, 3), (5, 8)]
    assert intersection_length(union([(0, 10)]), union([(-5, 1), (9, 12)])) == 2


def _mode_result(latency: float, kernels: tuple[str, ...] = ("mm", "c10d::allreduce_"),
                 verdict: str = "partial") -> ModeResult:
    return ModeResult(
        name="eager", status="ok", kernels_per_iter=float(len(kernels)),
        latency_ms=LatencyStats(median=latency, iqr=0, q1=latency, q3=latency, min=latency, mean=latency),
        timeline=tuple(TimelineEntry(k, "other", float(i), 1.0) for i, k in enumerate(kernels)),
        gemms=(GemmEpilogue(id="mm_0", kernels=("mm",), backend="ATen CPU", m=8, n=8, k=8, dtype="float32",
                            time_us_per_iter=1.0, module="fc1", verdict=verdict),),
        communication=Communication(1, 10.0 * latency, 0.0, 0.0, "gloo ranges"))


def test_combine_ranks_slowest_skew_and_differences():
    m = combine_ranks([_mode_result(1.0), _mode_result(1.5, ("mm", "add", "c10d::allreduce_")),
                       _mode_result(1.2, verdict="fused")])
    assert m.slowest_rank == 1 and m.latency_ms.median == 1.5 and m.rank_skew == pytest.approx(1.5)
    assert m.communication.time_us_per_iter == 15.0  # the headline rank's
    assert m.ranks_differ == (1, 2)
    assert m.ranks[1].differs == ("kernel sequence",) and m.ranks[2].differs == ("GEMM verdicts",)
    assert [r.slowest for r in m.ranks] == [False, True, False]


def test_combine_ranks_failed_rank_fails_the_mode():
    bad = ModeResult(name="eager", status="failed", error="RuntimeError: boom", error_kind="run")
    m = combine_ranks([_mode_result(1.0), bad])
    assert m.status == "failed" and m.error == "rank 1: RuntimeError: boom"
    assert m.slowest_rank == 0 and m.ranks[1].status == "failed"


def test_rank_views_per_point_limit_and_safe_trace_links():
    from kernelscope.report.ranks import markdown_tables, ranks_views
    from kernelscope.result import SweepPoint

    def mode(trace: str) -> ModeResult:
        m = combine_ranks([_mode_result(1.0), _mode_result(2.0)])
        return dataclasses.replace(m, ranks=tuple(dataclasses.replace(r, trace=trace) for r in m.ranks))

    points = (SweepPoint({"b": 1}, "b=1", (mode("tb/p0-b-1/eager/kernelscope_rank_0.1.pt.trace.json.gz"),)),
              SweepPoint({"b": 2}, "b=2", (mode("javascript:alert(1)"),)))
    run = RunResult(schema=SCHEMA, tool_version="0", created="", command="", model="m",
                    device="cpu", dtype="float32", environment=RunEnvironment(), modes=points[0].modes, points=points)
    views = ranks_views(run)
    assert [v.title for v in views] == ["eager @ b=1", "eager @ b=2"]
    assert views[0].rows[0].trace_href == "tb/p0-b-1/eager/kernelscope_rank_0.1.pt.trace.json.gz"
    assert views[1].rows[0].trace_href == ""  # result.json may come from anyone: no javascript: link
    md = "\n".join(markdown_tables(run, max_tables=1))
    assert "### Ranks: eager @ b=1 (2 ranks)" in md and "@ b=2" not in md
    assert "_1 more rank tables in report.html._" in md


def test_old_result_without_ranks_loads():
    run = result_from_json({"schema": "kernelscope.result/1", "tool_version": "0", "created": "", "command": "",
                         "model": "m", "device": "cpu", "dtype": "float32", "environment": {},
                         "modes": [{"name": "eager", "status": "ok"}]})
    assert run.modes[0].ranks == () and run.modes[0].world_size is None


def test_rendezvous_args():
    assert rendezvous_args(None) == ()
    assert rendezvous_args(2) == ("--standalone",)
    assert rendezvous_args(8, nnodes="2", node_rank=1, rdzv_backend="c10d", rdzv_endpoint="h0:29400",
                           rdzv_id="job") == ("--nnodes", "2", "--node-rank", "1", "--rdzv-backend", "c10d",
                                              "--rdzv-endpoint", "h0:29400", "--rdzv-id", "job")
    with pytest.raises(UsageError, match="add --nproc"):
        rendezvous_args(None, nnodes="2")
    with pytest.raises(UsageError, match="needs --rdzv-endpoint"):
        rendezvous_args(4, nnodes="2")
    assert torchrun_argv(["py", "-m", "kernelscope.capture.worker"], 2, ("--standalone",)) == [
        "py", "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", "-m",
        "kernelscope.capture.worker"]
    assert torchrun_argv(["py", "/run/worker/kernelscope_worker.py"], 1)[-1] == "/run/worker/kernelscope_worker.py"


def test_rank_dir_refusals(tmp_path: Path):
    with pytest.raises(UsageError, match="holds no trace files"):
        rank_trace_files(tmp_path)
    for name in ("a.pt.trace.json", "b.pt.trace.json"):
        (tmp_path / name).write_text(json.dumps({"distributedInfo": {"backend": "gloo", "rank": 0, "world_size": 2},
                                                 "traceEvents": []}))
    with pytest.raises(UsageError, match="several traces of rank 0"):
        rank_trace_files(tmp_path)


@pytest.mark.chromium
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium")
@pytest.mark.parametrize("run, page", [("tp_run", "report.html"), ("ddp_run", "report.html"),
                                       ("upgrade_ranks", "compare.html")])
@pytest.mark.slow
def test_ranks_pages_fit_1280(run: str, page: str, tmp_path: Path, request: pytest.FixtureRequest):
    """The Ranks sections: report.html (a sweep has one per shape point, with trace links) and upgrade-check's
    compare.html."""
    from tests import browser

    html = (request.getfixturevalue(run) / page).read_text(encoding="utf-8")
    for open_details in (False, True):
        m = browser.measure(html, tmp_path, 1280, open_details=open_details)
        assert m["scroll"] <= 1280 and not m["wide"], (open_details, m)


@pytest.mark.slow
def test_a_failing_rank_fails_the_mode_with_its_own_error(tmp_path: Path):
    out = tmp_path / "run"
    proc = run_cli("profile", "tests/models/rank_fails.py", "--nproc", "2", "--modes", "eager", *FAST,
                   "--out", str(out))
    assert proc.returncode == 1
    # rank 0 failed too (its peer closed the connection), later: the error named is rank 1's
    assert "kernelscope: error: rank 1: the model's forward (eager)" in proc.stderr
    assert "rank one refuses" in proc.stderr
    recs = [json.loads((out / "modes" / "eager" / f"rank-{r}" / "capture.json").read_text()) for r in (0, 1)]
    assert [r["status"] for r in recs] == ["failed", "failed"]
    assert recs[1]["failed_at"] <= recs[0]["failed_at"]


def test_only_rank_0_reports_progress(monkeypatch, capsys):
    from kernelscope.capture import progress

    progress.progress("rank 0 speaks")
    monkeypatch.setattr(progress, "_QUIET", True)  # what main() sets (progress.quiet) on a rank other than 0
    progress.progress("rank 1 is silent")
    assert capsys.readouterr().out == "@@progress rank 0 speaks\n"


def test_combine_ranks_of_one_host_of_two():
    """The second host of two (4 ranks each) holds ranks 4..7: they keep their numbers."""
    m = combine_ranks([_mode_result(1.0), _mode_result(2.0, verdict="fused")], rank_ids=[4, 5], world_size=8)
    assert [r.rank for r in m.ranks] == [4, 5] and m.slowest_rank == 5 and m.world_size == 8
    assert m.ranks_differ == (5,) and "differ from rank 4" in say(m.findings[-1])
