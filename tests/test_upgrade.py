"""The upgrade comparison (analysis/upgrade.py, report/upgrade.py): the H200 facts of torch 2.11 -> 2.14.1, GEMM
matching, the summary that answers the upgrade question first, the regression verdict, the JSON view and its
renderings, the gate."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from kernelscope.analysis.check import check_upgrade
from kernelscope.analysis.pairing import match_gemms
from kernelscope.analysis.upgrade import compare_upgrade
from kernelscope.cli import main
from kernelscope.errors import UsageError
from kernelscope.report.check import violation_line
from kernelscope.report.upgrade import (
    render_upgrade_html,
    render_upgrade_markdown,
    upgrade_data,
)
from kernelscope.report.words import say
from kernelscope.result import GemmEpilogue, ModeResult, NumericsResult, RunResult, part_from_json, to_json
from tests.conftest_reports import DATA, HOSTILE, ZERO_X, seed_h200_211, seed_h200_2141, timings


def gemm(op: str = "addmm", m: int = 16, n: int = 4096, k: int = 4096, *, module: str = "", backend: str = "cuBLASLt",
         fused: tuple[str, ...] = ("bias",), unfused: tuple[str, ...] = ("gelu",), verdict: str = "partial",
         time_us: float = 9.0, id: str = "g0") -> GemmEpilogue:
    return GemmEpilogue(id=id, kernels=(f"{backend}_kernel",), backend=backend, m=m, n=n, k=k, dtype="float16",
                        time_us_per_iter=time_us, op=op, epilogue=(*fused, *unfused), fused=fused, unfused=unfused,
                        verdict=verdict, module=module)


FUSED_TEMPLATE = dict(backend="Triton template", fused=("bias", "gelu"), unfused=(), verdict="fused")


def with_mode(run: RunResult, name: str, **changes) -> RunResult:
    return dataclasses.replace(run, modes=tuple(dataclasses.replace(m, **changes) if m.name == name else m
                                                for m in run.modes))


def pair(before_modes: tuple[ModeResult, ...], after_modes: tuple[ModeResult, ...], *, torch_after: str = "2.14.1"
         ) -> tuple[RunResult, RunResult]:
    base = seed_h200_211()
    return (dataclasses.replace(base, modes=before_modes),
            dataclasses.replace(base, modes=after_modes, environment=dataclasses.replace(base.environment,
                                                                                         torch=torch_after)))


def mode(name: str, median: float, gemms: tuple[GemmEpilogue, ...], *, numerics: dict | None = None,
         status: str = "ok", error: str = "", kernels: float = 2.0, seed: int = 1) -> ModeResult:
    ok = status == "ok"
    return ModeResult(name=name, status=status, error=error, latency_ms=timings(median, seed=seed) if ok else None,
                      gemms=gemms if ok else (), kernels_per_iter=kernels if ok else None, first_call_s=3.0,
                      peak_memory_bytes=1 << 25,
                      numerics=part_from_json(NumericsResult, numerics) if numerics else None)


PASS = {"vs_eager": {"pass": True}, "vs_reference": {"pass": True}}
FAIL = {"vs_eager": {"pass": False, "reason": "max abs error 0.5 > 0.01"}}


# --- the real H200 facts: torch 2.11 -> 2.14.1 on the seed model ---------------------------------------------------
def test_h200_seed_upgrade_answers_in_the_first_lines():
    # GIVEN the seed model measured on the H200 under torch 2.11 and under torch 2.14.1
    data = upgrade_data(compare_upgrade(seed_h200_211(), seed_h200_2141()))
    # THEN the first line says what was upgraded, the second the verdict, the third the compiled mode's answer
    assert data["summary"][0] == "Upgrade check: torch 2.11.0+cu130 → 2.14.1+cu130 on NVIDIA H200, float16"
    assert data["summary"][1].startswith("Verdict: no regression")
    assert data["summary"][1].endswith("better: max-autotune")
    assert data["summary"][3] == (
        "max-autotune: GEMM `addmm 16 × 4096 × 4096` now fused bias+gelu in a Triton template "
        "(was: Triton template + separate gelu); same speed within noise (1.01× slower after the upgrade, "
        "95% CI 1.00–1.02× slower); "
        "kernels/iter 2 → 1; numerics not measured")
    auto = next(m for m in data["modes"] if m["name"] == "max-autotune")
    assert auto["change"] == "none"
    assert auto["latency"]["ratio"] == pytest.approx(0.07811200022697448 / 0.0774944007396698)
    assert auto["latency"]["method"] == "bootstrap"
    assert auto["kernels_per_iter"] == {"before": 2.0, "after": 1.0}
    (g,) = auto["gemms"]
    assert (g["matched_by"], g["change"], g["gained"], g["lost"]) == ("op", "fusion gained", ["gelu"], [])
    assert g["before"]["verdict"] == "partial" and g["after"]["verdict"] == "fused"
    assert data["comparable"]["upgrade"] is True
    assert data["comparable"]["before"]["torch"] == "2.11.0+cu130"
    assert data["verdict"] == "ok"
    # modes run on one side only are said so, not compared
    assert "eager: only before (not run after)" in data["summary"]
    assert "max-autotune-nvgemm: only after (failed)" in data["summary"]


def test_the_committed_upgrade_reads_one_way():
    # GIVEN the committed H200 upgrade-check of the seed model, torch 2.11 -> 2.14.1: after / before 0.907 (eager,
    # within noise), 0.640 (default) and 0.914 (max-autotune)
    from kernelscope.report.io import load_result

    run = DATA / "h200-torch2.14.1-kernelscope-run" / "up-seed"
    cmp = compare_upgrade(load_result(run / "before"), load_result(run / "after"))
    data = upgrade_data(cmp)
    # THEN the sentences and the table say "1.10× faster after the upgrade", never "0.907× after/before"
    eager = next(line for line in data["summary"] if line.startswith("eager:"))
    assert "same speed within noise (1.10× faster after the upgrade, 95% CI 1.01× slower to 1.17× faster)" in eager
    md = render_upgrade_markdown(data)
    assert "| **1.56× faster** (95% CI 1.42–1.66× faster) |" in md
    assert "| 1.10× faster, **within noise** (95% CI 1.01× slower to 1.17× faster) |" in md
    html = render_upgrade_html(data, "test")
    assert "Change after the upgrade" in html and "1.42–1.66× faster" in html
    for text in (md, html, json.dumps(data["summary"], ensure_ascii=False)):
        assert not ZERO_X.findall(text)
    # and a --max-regression below 1 (asking for a speedup) says so one way
    (v, *_) = check_upgrade(cmp, 0.5).violations
    assert violation_line(v) == ("eager: 1.10× faster after the upgrade, 95% CI 1.01× slower to 1.17× faster, "
                                 "required at least 2.00× faster (--max-regression)")
    # while compare.json keeps the numbers: the ratio after / before and the speedup
    modes = {m["name"]: m for m in data["modes"]}
    assert modes["eager"]["latency"]["ratio"] == pytest.approx(0.907, abs=1e-3)
    assert modes["default"]["latency"]["speedup"] == pytest.approx(1 / modes["default"]["latency"]["ratio"])


def test_the_issue_sentence_cublaslt_to_a_fused_triton_template_faster():
    # GIVEN default-like cuBLASLt + separate GELU before, and a Triton template fusing both after, 1.4x faster
    before = mode("max-autotune", 0.14, (gemm(module="linear"),), numerics=PASS)
    after = mode("max-autotune", 0.10, (gemm(module="linear", **FUSED_TEMPLATE),), numerics=PASS, kernels=1.0)
    data = upgrade_data(compare_upgrade(*pair((before,), (after,))))
    assert data["summary"][2] == ("max-autotune: GEMM `linear` now fused bias+gelu in a Triton template (was: "
                                  "cuBLASLt + separate gelu); 1.40× faster (140 µs → 100 µs); kernels/iter 2 → 1; "
                                  "numerics within tolerance")
    assert data["modes"][0]["change"] == "faster"
    assert data["modes"][0]["latency"]["speedup"] == pytest.approx(1.4)
    assert data["modes"][0]["gemms"][0]["matched_by"] == "module"


@pytest.mark.parametrize(
    ("case", "before", "after", "regressions", "phrase"),
    [
        ("slower", mode("m", 0.10, (gemm(),)), mode("m", 0.13, (gemm(),)), ("slower",), "1.30× slower"),
        ("new failure", mode("m", 0.10, (gemm(),)), mode("m", 0, (), status="failed", error="InductorError: boom"),
         ("new failure",), "now FAILED (InductorError: boom); was ok"),
        ("numerics", mode("m", 0.10, (gemm(),), numerics=PASS), mode("m", 0.10, (gemm(),), numerics=FAIL),
         ("numerics",), "numerics FAIL (max abs error 0.5 > 0.01)"),
        ("fusion lost", mode("m", 0.10, (gemm(**FUSED_TEMPLATE),)), mode("m", 0.10, (gemm(),)), ("fusion lost",),
         "no longer fuses gelu: cuBLASLt + separate gelu (was fused in Triton template)"),
        ("fixed", mode("m", 0, (), status="failed", error="x"), mode("m", 0.10, (gemm(),)), (),
         "now runs (was failed: x)"),
        ("available, fails", mode("m", 0, (), status="unavailable", error="NVGEMM needs torch>=2.14"),
         mode("m", 0, (), status="failed", error="NoValidChoicesError: No choices exist for backend"), (),
         "now available but FAILED (NoValidChoicesError: No choices exist for backend); was unavailable (NVGEMM "
         "needs torch>=2.14)"),
        ("available, runs", mode("m", 0, (), status="unavailable", error="NVGEMM needs torch>=2.14"),
         mode("m", 0.10, (gemm(backend="NVGEMM/CuTeDSL"),)), (),
         "now runs (was unavailable: NVGEMM needs torch>=2.14)"),
        ("backend switched", mode("m", 0.10, (gemm(),)), mode("m", 0.10, (gemm(backend="NVGEMM/CuTeDSL"),)), (),
         "now on NVGEMM/CuTeDSL (was cuBLASLt), fused bias, separate gelu as before"),
    ],
)
def test_regressions_and_their_sentences(case, before, after, regressions, phrase):
    cmp = compare_upgrade(*pair((before,), (after,)))
    (m,) = cmp.modes
    assert tuple(say(r) for r in m.regressions) == regressions
    data = upgrade_data(cmp)
    assert phrase in data["summary"][2], data["summary"][2]
    assert data["verdict"] == ("regression" if regressions else "ok")
    if regressions:
        assert data["summary"][1] == f"Verdict: REGRESSION (m {regressions[0]})"


def test_gemms_match_by_module_then_op_then_shape():
    # GIVEN two layers of one shape (modules known), and an addmm that the new version lowers to mm
    before = (gemm(module="layers.0.fc", id="a"), gemm(module="layers.1.fc", id="b"),
              gemm("addmm", 16, 1024, 4096, id="c"), gemm("bmm", 8, 8, 8, id="d"))
    after = (gemm(module="layers.1.fc", id="x", **FUSED_TEMPLATE), gemm(module="layers.0.fc", id="y"),
             gemm("mm", 16, 1024, 4096, id="z"), gemm("mm", 2, 2, 2, id="w"))
    rows = match_gemms(before, after)
    got = [(r.label, r.matched_by, r.before.id if r.before else None, r.after.id if r.after else None, r.change)
           for r in rows]
    assert got == [
        ("layers.0.fc", "module", "a", "y", "same"),
        ("layers.1.fc", "module", "b", "x", "fusion gained"),  # not confused with layer 0 by order
        ("addmm → mm 16 × 1024 × 4096", "shape", "c", "z", "same"),
        ("bmm 8 × 8 × 8", "", "d", None, "GEMM gone"),
        ("mm 2 × 2 × 2", "", None, "w", "new GEMM"),
    ]


def test_markdown_and_html_print_the_data_escaped():
    # GIVEN a module path and an error holding markup
    before = mode("m", 0.10, (gemm(module=HOSTILE),))
    after = mode("m", 0, (), status="failed", error=HOSTILE)
    data = upgrade_data(compare_upgrade(*pair((before,), (after,))))
    md = render_upgrade_markdown(data)
    html = render_upgrade_html(data, "0.1.0")
    # markdown: every "<" outside a code span is backslash-escaped (inside one it is literal text)
    assert re.search(r"(?<!\\)<", re.sub(r"(`+).*?\1", "", md)) is None
    assert "</script><img" not in html
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert "Content-Security-Policy" in html
    # the page opens with the answer: the headline, the verdict, then the per-mode lines
    body = html[html.index("<main>"):]
    assert body.index("Upgrade check: torch") < body.index("REGRESSION") < body.index("id=\"modes\"")
    # only what Markdown needs is escaped: the headline reads as written
    assert md.startswith("## Upgrade check: torch 2.11.0+cu130 → 2.14.1")


def test_compare_json_is_plain_json_with_every_per_mode_field():
    data = upgrade_data(compare_upgrade(seed_h200_211(), seed_h200_2141()))
    again = json.loads(json.dumps(data, allow_nan=False))
    assert again == data
    auto = next(m for m in data["modes"] if m["name"] == "max-autotune")
    assert set(auto) >= {"latency", "compile_s", "kernels_per_iter", "peak_memory_bytes", "numerics", "gemms",
                         "change", "status_change", "summary"}
    assert auto["peak_memory_bytes"]["before"] == auto["peak_memory_bytes"]["after"] > 0
    assert data["schema"] == "kernelscope.compare/1" and data["kind"] == "upgrade"


# --- the gate -------------------------------------------------------------------------------------------------
def write_upgrade_dir(folder: Path, before: RunResult, after: RunResult) -> Path:
    for side, run in (("before", before), ("after", after)):
        (folder / side).mkdir(parents=True, exist_ok=True)
        (folder / side / "result.json").write_text(json.dumps(to_json(run)))
    (folder / "compare.json").write_text(json.dumps(upgrade_data(compare_upgrade(before, after))))
    return folder


def run_cli(*args: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return int(info.value.code or 0)


def test_max_regression_noise_aware():
    before, after = mode("m", 0.10, (gemm(),)), mode("m", 0.104, (gemm(),), seed=2)
    cmp = compare_upgrade(*pair((before,), (after,)))
    assert check_upgrade(cmp, 1.03).ok  # 1.04x, but the interval reaches below 1.03: not shown to regress
    assert not check_upgrade(cmp, 1.01).ok
    with pytest.raises(UsageError):
        check_upgrade(cmp, 0)
    with pytest.raises(UsageError, match="no such mode"):
        check_upgrade(cmp, 1.1, ("nope",))


def test_check_command_on_an_upgrade_dir(tmp_path: Path, capsys):
    # GIVEN torch 2.11 before, and after it max-autotune faster with 2.14.1's fused GEMM
    fused = seed_h200_2141().mode("max-autotune").gemms
    good = write_upgrade_dir(tmp_path / "good", seed_h200_211(), with_mode(
        seed_h200_211(), "max-autotune", latency_ms=timings(0.05, seed=9), gemms=fused))
    assert run_cli("check", str(good), "--max-regression", "1.05") == 0
    assert "ok: --max-regression hold for eager, default, max-autotune" in capsys.readouterr().out
    # the result rules check the after run (before, max-autotune was partial)
    assert run_cli("check", str(good), "--expect-fused", "all", "--mode", "max-autotune") == 0
    assert run_cli("check", str(good), "--expect-fused", "all", "--mode", "default") == 1
    capsys.readouterr()
    bad = write_upgrade_dir(tmp_path / "bad", seed_h200_211(), with_mode(seed_h200_211(), "default",
                                                                        latency_ms=timings(0.3, seed=9)))
    assert run_cli("check", str(bad), "--max-regression", "1.5", "--mode", "default") == 1
    line = capsys.readouterr().out.strip()
    assert line == ("default: 1.93× slower after the upgrade, 95% CI 1.91–1.94× slower, allowed at most 1.50× slower "
                    "(--max-regression)")
    # usage errors: no rule; --max-regression on a plain result directory
    assert run_cli("check", str(good)) == 2
    assert run_cli("check", str(good / "after"), "--max-regression", "1.1") == 2
    assert "needs a directory written by `kernelscope upgrade-check`" in capsys.readouterr().err
