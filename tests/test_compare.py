"""kernelscope compare: pairs of real results (the H200 fixtures, the CPU run), the objects and the command."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kernelscope.analysis.compare import compare_results
from kernelscope.cli import main
from kernelscope.report.compare import (
    ratio_chart,
    render_compare_html,
    render_compare_markdown,
)
from kernelscope.report.io import load_result
from kernelscope.report.markdown import MAX_CHARS
from kernelscope.result import RunResult, to_json
from tests.conftest_reports import (
    DATA,
    HOSTILE,
    ZERO_X,
    big_h200_211,
    huge_result,
    seed_h200_211,
    seed_h200_2141,
    timings,
    with_hostile_names,
)


def write(result: RunResult, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps(to_json(result)))
    return folder


def run_cli(*args: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return int(info.value.code or 0)


def test_torch_211_to_2141_gains_the_gelu_fusion():
    # GIVEN the seed model on the H200: torch 2.11 (three modes) and torch 2.14.1 (max-autotune, and NVGEMM alone)
    cmp = compare_results(seed_h200_211(), seed_h200_2141())
    modes = {m.name: m for m in cmp.modes}
    assert list(modes) == ["eager", "default", "max-autotune", "max-autotune-nvgemm"]
    auto = modes["max-autotune"]
    # THEN max-autotune now fuses GELU into the Triton template: 2 kernels -> 1, the GELU kernel is gone
    (gemm,) = auto.gemms
    assert gemm.kind == "fusion gained"
    assert gemm.gained == ("gelu",)
    assert gemm.lost == ()
    assert not gemm.backend_switched
    assert (auto.kernels_delta.base, auto.kernels_delta.head) == (2.0, 1.0)
    assert {c.key: c.delta for c in auto.categories} == {"gemm": 0.0, "pointwise": -1.0}
    assert auto.latency.value == pytest.approx(0.07811200022697448 / 0.0774944007396698)
    assert auto.latency.method == "bootstrap"
    # the NVGEMM mode is new and failed; eager and default were not run on 2.14.1
    assert [m.name for m in cmp.new_failures] == ["max-autotune-nvgemm"]
    assert modes["eager"].status_change == "only in base"
    assert modes["eager"].call == "n/a"
    # and the environment change is the torch version (and NVGEMM's availability)
    env = {k: (b, h) for k, b, h in cmp.environment}
    assert env["torch"] == ("2.11.0+cu130", "2.14.1+cu130")
    assert env["gemm_backends / NVGEMM / available"] == ("no", "yes")


def test_new_failure_when_a_mode_breaks():
    cmp = compare_results(big_h200_211(), big_h200_211(autotune_failed=True))
    modes = {m.name: m for m in cmp.modes}
    assert [m.name for m in cmp.new_failures] == ["max-autotune"]
    assert modes["max-autotune"].status_change == "new failure"
    assert modes["max-autotune"].call == "n/a"
    # unchanged modes: same samples, ratio 1, within noise
    assert modes["default"].latency.value == 1.0
    assert modes["default"].call == "within noise"
    reverse = compare_results(big_h200_211(autotune_failed=True), big_h200_211())
    assert [m.name for m in reverse.fixed] == ["max-autotune"]


def slower(result: RunResult, factor: float, rel_iqr: float) -> RunResult:
    modes = tuple(dataclasses.replace(m, latency_ms=timings(m.latency_ms.median * factor, rel_iqr, seed=i + 10))
                  for i, m in enumerate(result.modes))
    return dataclasses.replace(result, modes=modes)


def test_noise_aware_call():
    base = big_h200_211()
    # 10% slower with 1% spread: a real regression
    cmp = compare_results(base, slower(base, 1.10, 0.01))
    for m in cmp.modes:
        assert m.call == "slower", m.name
        assert 1.0 < m.latency.low < m.latency.high
    # 1% slower with a 10% spread: within noise
    cmp = compare_results(slower(base, 1.0, 0.10), slower(base, 1.01, 0.10))
    assert {m.call for m in cmp.modes} == {"within noise"}
    assert all(m.latency.low < 1.0 < m.latency.high for m in cmp.modes)


def test_backend_switch_is_reported():
    base = seed_h200_211()
    default, autotune = base.modes[1], base.modes[2]
    head = dataclasses.replace(base, modes=(base.modes[0], dataclasses.replace(default, gemms=autotune.gemms),
                                            autotune))
    cmp = compare_results(base, head)
    (gemm,) = next(m for m in cmp.modes if m.name == "default").gemms
    assert gemm.backend_switched
    assert gemm.kind == "backend switched"
    assert "backend cuBLASLt → Triton template" in render_compare_markdown(cmp)


def test_compare_command_writes_html_and_md(tmp_path, capsys):
    base = write(seed_h200_211(), tmp_path / "torch2.11")
    head = write(seed_h200_2141(), tmp_path / "torch2.14.1")
    out = tmp_path / "cmp"
    assert run_cli("compare", str(base), str(head), "--out", str(out)) == 0
    html = (out / "compare.html").read_text()
    md = (out / "compare.md").read_text()
    assert "fusion gained" in html and "now fused: gelu" in html
    assert "Content-Security-Policy" in html and "http://" not in html and "https://" not in html
    assert "### New failures" in md and "max-autotune-nvgemm" in md and "\\-" not in md
    printed = capsys.readouterr().out
    assert "max-autotune: " in printed and "fusion gained" in printed
    assert sorted(p.name for p in out.iterdir()) == ["compare.html", "compare.json", "compare.md"]
    data = json.loads((out / "compare.json").read_text())
    # torch 2.11 -> 2.14.1 on the same H200 and dtype: the upgrade case, comparable, the versions listed
    assert data["comparable"]["ok"] is True
    assert "torch: 2.11.0+cu130 → 2.14.1+cu130" in data["comparable"]["differences"]
    modes = {m["mode"]: m for m in data["modes"]}
    g0 = modes["max-autotune"]["gemms"][0]
    assert g0["base"] == "partial" and g0["head"] == "fused"
    assert {m["change"] for m in data["modes"]} <= {"none", "faster", "slower"}


def test_a_real_compare_reads_one_way(tmp_path, capsys):
    # GIVEN two committed H200 runs of one transformer block, batch 32 (base) and batch 4 (head): eager, max-autotune
    # and ATEN+TRITON+NVGEMM faster beyond noise (head / base 0.438, 0.799, 0.386), default within noise (1.06,
    # its interval across 1)
    runs = DATA / "h200-torch2.14.1-kernelscope-run"
    base, head = runs / "tb-bf16-b32", runs / "tb-bf16-b4"
    out = tmp_path / "cmp"
    assert run_cli("compare", str(base), str(head), "--out", str(out)) == 0
    printed = capsys.readouterr().out
    html, md = (out / "compare.html").read_text(), (out / "compare.md").read_text()
    # THEN every text reads one way: no "0.438×", no "0.5×" tick
    for text in (html, md, printed):
        assert not ZERO_X.findall(text)
    assert "eager: 2.28× faster (-56.2%)" in printed
    assert "default: 1.06× slower (+5.8%), within noise" in printed
    assert "| **2.28× faster** (-56.2%; 95% CI 2.09–2.54× faster) |" in md
    assert "| 1.06× slower, **within noise** (+5.8%; 95% CI 1.37× slower to 1.13× faster) |" in md
    assert "95% CI 2.09–2.54× faster" in html
    # and the chart's ticks come in mirrored pairs, at mirrored distances from 1×; each row's label is its interval
    chart = ratio_chart(compare_results(load_result(base), load_result(head)))
    ticks = {lb.text: lb.x for lb in chart.labels if lb.cls == "tick"}
    names = list(ticks)
    assert "1×" in names and "2× slower" in names and "2× faster" in names
    assert names == [*[n for n in names if n.endswith("slower")], "1×", *[n for n in names if n.endswith("faster")]]
    for n in names:
        if n.endswith("faster"):  # every "k× faster" has its "k× slower", at the mirrored distance from 1×
            assert ticks[n] - ticks["1×"] == pytest.approx(ticks["1×"] - ticks[n.replace("faster", "slower")])
    assert [lb.text for lb in chart.labels if lb.cls == "value"] == [
        "2.09–2.54× faster", "1.37× slower to 1.13× faster", "1.13–1.31× faster", "2.43–2.82× faster"]
    dots = {r.title.split(":")[0]: r.x + r.w / 2 for r in chart.rects}  # faster to the right of 1×
    assert dots["eager"] > ticks["2× faster"] and ticks["2× slower"] < dots["default"] < ticks["1×"]
    # while compare.json keeps the ratios as numbers (head / base)
    data = {m["mode"]: m for m in json.loads((out / "compare.json").read_text())["modes"]}
    assert 0.43 < data["eager"]["ratio"] < 0.44 and 1.05 < data["default"]["ratio"] < 1.06
    assert data["eager"]["low"] < data["eager"]["ratio"] < data["eager"]["high"] < 1


def test_compare_command_usage_errors(tmp_path, capsys):
    head = write(seed_h200_2141(), tmp_path / "head")
    assert run_cli("compare", str(tmp_path / "missing"), str(head), "--out", str(tmp_path / "o")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing does not exist" in err[0]
    assert not (tmp_path / "o").exists()


def test_hostile_names_and_huge_results(tmp_path):
    cmp = compare_results(with_hostile_names(seed_h200_211()), with_hostile_names(seed_h200_2141()))
    html = render_compare_html(cmp)
    assert HOSTILE not in html and "&lt;/script&gt;&lt;img src=x" in html
    assert "<img" not in html
    big = compare_results(huge_result(), huge_result(n_gemms=300))
    assert len(render_compare_markdown(big)) < MAX_CHARS


@pytest.mark.slow
def test_real_cpu_run_against_itself(cpu_run, tmp_path):
    # GIVEN a real CPU run compared with itself: nothing changed, every measured mode is within noise
    result = load_result(cpu_run)
    cmp = compare_results(result, result)
    for m in cmp.modes:
        assert m.status_change in ("", "still unavailable"), m.name  # reduce-overhead needs a GPU
        assert m.changed_gemms == ()
        if m.latency.value is not None:
            assert m.latency.value == 1.0
            assert m.call == "within noise"
    assert run_cli("compare", str(cpu_run), str(cpu_run), "--out", str(tmp_path / "cmp")) == 0
    assert (tmp_path / "cmp" / "compare.html").stat().st_size > 0


def test_gemms_pair_by_module_when_a_shape_parameter_changed():
    # batch 32 vs batch 4 of the same transformer block: every GEMM changes shape (M 8192 -> 1024) and keeps its
    # module (qkv, proj, fc1, fc2, from the traced graph): they pair by module at the new shape, not as four GEMMs
    # gone and four new. max-autotune's fc2 fused bias + add at batch 32 (Triton template, in base) and runs
    # cuBLAS at batch 4: fusion lost.
    runs = DATA / "h200-torch2.14.1-kernelscope-run"
    cmp = compare_results(load_result(runs / "tb-bf16-b32"), load_result(runs / "tb-bf16-b4"))
    ma = next(m for m in cmp.modes if m.name == "max-autotune")
    assert [c.key for c in ma.gemms] == [
        "qkv: 8192 × 1536 × 512 → 1024 × 1536 × 512", "proj: 8192 × 512 × 512 → 1024 × 512 × 512",
        "fc1: 8192 × 2048 × 512 → 1024 × 2048 × 512", "fc2: 8192 × 512 × 2048 → 1024 × 512 × 2048"]
    assert not any(c.kind in ("new GEMM", "GEMM gone") for m in cmp.modes for c in m.gemms)
    fc2 = ma.gemms[3]
    assert fc2.kind == "fusion lost" and fc2.lost
