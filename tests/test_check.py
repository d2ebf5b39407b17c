"""kernelscope check: the CI gate. Exit 0 when every rule holds, 1 with a line per violation, 2 on usage errors."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelscope.analysis.check import Rules, check_result
from kernelscope.cli import main
from kernelscope.errors import UsageError
from kernelscope.report.check import format_notes, violation_line, violation_text
from kernelscope.report.io import load_result
from kernelscope.result import ModeResult, Note, RunResult, to_json
from tests.conftest_reports import ZERO_X, big_h200_211, seed_h200_211, seed_h200_2141, timings


def write(result: RunResult, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps(to_json(result)))
    return folder


def run_cli(*args: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return int(info.value.code or 0)


def violations(result: RunResult, **rules) -> list[tuple[str, str]]:
    return [(v.mode, v.rule) for v in check_result(result, Rules(**rules)).violations]


def test_expect_fused_all_on_torch_211_and_2141():
    # torch 2.11: both compiled modes leave GELU in its own kernel
    assert violations(seed_h200_211(), expect_fused="all") == [
        ("default", "--expect-fused"), ("max-autotune", "--expect-fused")]
    # torch 2.14.1: the Triton template fused bias and GELU
    assert violations(seed_h200_2141(), expect_fused="all", modes=("max-autotune",)) == []


def test_expect_fused_none_and_patterns():
    # the cuBLASLt bias epilogue is a fusion, so "none" fails wherever bias was fused
    assert [m for m, _ in violations(seed_h200_211(), expect_fused="none")] == ["default", "max-autotune"]
    assert violations(seed_h200_211(), expect_fused="bias") == []
    assert [m for m, _ in violations(seed_h200_211(), expect_fused="gelu")] == ["default", "max-autotune"]
    assert violations(seed_h200_2141(), expect_fused="gelu|bias", modes=("max-autotune",)) == []
    # a pattern matching no epilogue op is a violation: a typo must not pass forever
    outcome = check_result(seed_h200_211(), Rules(expect_fused="silu", modes=("default",)))
    assert [violation_text(v) for v in outcome.violations] == ["no GEMM epilogue op matches 'silu'"]


def test_a_failed_mode_violates_its_rules():
    outcome = check_result(seed_h200_2141(), Rules(max_kernels_per_iter=5))
    assert outcome.checked_modes == ("max-autotune", "max-autotune-nvgemm")
    (v,) = outcome.violations
    assert v.mode == "max-autotune-nvgemm"
    assert violation_text(v).startswith("status failed: torch._inductor.exc.InductorError: NoValidChoicesError")


def test_an_interrupted_mode_violates_its_rules():
    # A run stopped by SIGTERM keeps its finished modes; one that did not finish shows no rule holds.
    r = seed_h200_211()
    stopped = ModeResult(name="max-autotune", status="interrupted", error_kind="interrupted",
                         error="interrupted (SIGTERM) while it ran")
    r = dataclasses.replace(r, modes=tuple(stopped if m.name == "max-autotune" else m for m in r.modes))
    outcome = check_result(r, Rules(max_kernels_per_iter=3))
    assert [violation_line(v) for v in outcome.violations] == [
        "max-autotune: status interrupted: interrupted (SIGTERM) while it ran (--max-kernels-per-iter)"]


def test_unavailable_mode_is_skipped_unless_named():
    r = big_h200_211()
    unavailable = dataclasses.replace(r.modes[2], name="reduce-overhead", status="unavailable",
                                      error="CUDA graphs need a GPU")
    r = dataclasses.replace(r, modes=(*r.modes, unavailable))
    outcome = check_result(r, Rules(max_kernels_per_iter=2))
    assert outcome.ok
    assert format_notes(outcome) == ["reduce-overhead: unavailable on that machine, skipped (CUDA graphs need a GPU)"]
    assert [m for m, _ in violations(r, max_kernels_per_iter=2, modes=("reduce-overhead",))] == ["reduce-overhead"]


def test_kernel_budget():
    assert violations(seed_h200_211(), max_kernels_per_iter=2) == [("default", "--max-kernels-per-iter")]
    assert violations(seed_h200_211(), max_kernels_per_iter=3) == []
    # eager is checked only when named
    assert violations(seed_h200_211(), max_kernels_per_iter=2, modes=("eager",)) == [
        ("eager", "--max-kernels-per-iter")]


def test_latency_rules_on_the_seed_run():
    r = seed_h200_211()  # default 2.52x eager's latency, max-autotune 1.25x
    assert violations(r, max_slowdown=2.0) == [("default", "--max-slowdown")]
    assert violations(r, max_slowdown=3.0) == []
    assert violations(r, min_speedup=1.0) == [("default", "--min-speedup"), ("max-autotune", "--min-speedup")]
    assert violations(r, min_speedup=0.5, modes=("max-autotune",)) == []
    without_eager = dataclasses.replace(r, modes=r.modes[1:])
    (v,) = check_result(without_eager, Rules(min_speedup=1.0, modes=("default",))).violations
    assert violation_text(v) == "no eager latency to compare with (run eager too)"


def test_latency_rule_messages_read_one_way():
    # GIVEN limits on both sides of 1 (a limit below 1 asks for a speedup, one below 1 allows a slowdown)
    r = seed_h200_211()  # default 2.52x eager's latency, max-autotune 1.25x
    lines = [violation_line(v) for v in check_result(r, Rules(max_slowdown=2.0)).violations]
    assert lines == ["default: 2.52× slower than eager (156 µs vs 61.9 µs, 95% CI 2.49–2.54× slower), allowed at "
                     "most 2.00× slower (--max-slowdown)"]
    (v,) = check_result(r, Rules(max_slowdown=0.9, modes=("max-autotune",))).violations
    assert violation_text(v).endswith("required at least 1.11× faster")
    (v,) = check_result(r, Rules(min_speedup=0.5)).violations
    assert violation_text(v).endswith("may be at most 2.00× slower")
    # THEN no message shows a ratio below 1 as a factor ("0.398×", "0.900×")
    for rules in (Rules(max_slowdown=0.9), Rules(min_speedup=0.5), Rules(min_speedup=1.5)):
        for v in check_result(r, rules).violations:
            assert not ZERO_X.search(violation_line(v)), violation_line(v)


def test_latency_rules_do_not_flap_on_noise():
    # GIVEN a compiled mode whose median is 0.5% slower than eager, with a 5% spread (noise)
    r = big_h200_211()
    eager = dataclasses.replace(r.modes[0], latency_ms=timings(0.200, 0.05, seed=21))
    same = dataclasses.replace(r.modes[1], latency_ms=timings(0.201, 0.05, seed=22))
    r = dataclasses.replace(r, modes=(eager, same))
    # THEN "no slower than eager" holds: the point estimate misses it, but its 95% interval contains 1.0
    assert violations(r, min_speedup=1.0) == []
    assert violations(r, max_slowdown=1.0) == []
    # but a clear miss is still a miss
    assert violations(r, min_speedup=1.5) == [("default", "--min-speedup")]


def test_usage_errors():
    r = seed_h200_211()
    for rules in (Rules(), Rules(expect_fused="("), Rules(max_slowdown=0), Rules(max_slowdown=1.1, modes=("nope",))):
        with pytest.raises(UsageError):
            check_result(r, rules)


def test_check_command_exit_codes(tmp_path, capsys):
    d = write(seed_h200_211(), tmp_path / "run")
    assert run_cli("check", str(d), "--max-kernels-per-iter", "3", "--expect-fused", "bias") == 0
    assert capsys.readouterr().out.startswith("ok: --expect-fused, --max-kernels-per-iter hold for default, ")
    assert run_cli("check", str(d), "--max-kernels-per-iter", "2", "--min-speedup", "1") == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [
        "default: 3 kernels per iteration > 2 (--max-kernels-per-iter)",
        "default: 2.52× slower than eager (156 µs vs 61.9 µs, 95% CI 2.49–2.54× slower), needs a speedup of at least "
        "1.00× (--min-speedup)",
        "max-autotune: 1.25× slower than eager (77.5 µs vs 61.9 µs, 95% CI 1.24–1.26× slower), needs a speedup of at "
        "least 1.00× (--min-speedup)",
    ]
    assert run_cli("check", str(d), "--expect-fused", "all", "--mode", "max-autotune,default") == 1
    assert len(capsys.readouterr().out.strip().splitlines()) == 2
    # usage errors: exit 2 with one line on stderr
    for args in ((str(d),), (str(d), "--expect-fused", "(["), (str(d), "--mode", "nope", "--max-slowdown", "2"),
                 (str(tmp_path / "none"), "--max-slowdown", "2"), (str(d), "--max-kernels-per-iter", "0"),
                 (str(d), "--max-slowdown", "fast")):
        assert run_cli("check", *args) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("kernelscope: error: "), (args, err)


def test_check_as_a_ci_step_in_a_real_subprocess(tmp_path):
    d = write(seed_h200_2141(), tmp_path / "run")
    proc = subprocess.run([sys.executable, "-m", "kernelscope", "check", str(d), "--expect-fused", "all"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1
    assert proc.stdout.strip().splitlines() == [
        ("max-autotune-nvgemm: status failed: torch._inductor.exc.InductorError: NoValidChoicesError: No choices to "
        "select. Provided reason: All choices failed to compile for backend. please consider adding ATEN into "
        "max_autotune_gemm_backends config (defined in torch/_inductor/config.py) to allow at least one choice. "
        "(--expect-fused)")
    ]


@pytest.mark.slow
def test_real_cpu_run(cpu_run):
    # GIVEN a real CPU run: its own kernel counts are the tightest budget that holds
    result = load_result(cpu_run)
    ok = [m for m in result.modes if m.status == "ok" and m.name != "eager" and m.kernels_per_iter]
    assert ok
    worst = max(m.kernels_per_iter for m in ok)
    assert check_result(result, Rules(max_kernels_per_iter=worst, modes=tuple(m.name for m in ok))).ok
    if worst > 1:
        tighter = check_result(result, Rules(max_kernels_per_iter=worst - 1, modes=tuple(m.name for m in ok)))
        assert [v.mode for v in tighter.violations] == [m.name for m in ok if m.kernels_per_iter > worst - 1]


def test_expect_fused_all_fails_when_gemm_kernels_ran_but_no_verdict_came_out():
    # A mode whose trace shows GEMM-class kernels but whose analysis produced no GEMM (no output code, a backend
    # the engine does not know): "all fused" over an empty list must not pass.
    r = seed_h200_2141()
    m = r.mode("max-autotune")
    assert m.kernels_by_category.get("gemm", 0) > 0
    blind = dataclasses.replace(r, modes=tuple(dataclasses.replace(x, gemms=()) if x.name == "max-autotune" else x
                                               for x in r.modes))
    outcome = check_result(blind, Rules(expect_fused="all", modes=("max-autotune",)))
    (v,) = outcome.violations
    assert v.rule == "--expect-fused" and "no GEMM verdict was derived" in violation_text(v)


def _with_coverage(r: RunResult, **per_mode) -> RunResult:
    """The result with each named mode's coverage self-check set (``None`` leaves it underived)."""
    return dataclasses.replace(r, modes=tuple(dataclasses.replace(m, gemm_coverage=per_mode[m.name])
                                              if m.name in per_mode else m for m in r.modes))


def test_check_coverage_through_the_cli(tmp_path):
    # GIVEN the seed run whose eager mode lost its GEMM (a convolution that launched only a layout transform)
    from click.testing import CliRunner

    from kernelscope.cli import _register, cli
    from kernelscope.result import GemmCoverage, GemmOp

    _register()
    full = GemmCoverage(source="output code", ops=1, attributed=1, by_kind={"addmm": 1})
    lost = GemmCoverage(source="trace CPU ops", ops=1, attributed=0, by_kind={"convolution": 1}, unattributed=(
        GemmOp("aten::cudnn_convolution", "convolution", "stem.proj", "model.py:12", 1568, 768, 768,
                         reason=Note("launched-only", {"kernels": ["nchwToNhwcKernel"]})),))
    runner = CliRunner()
    ok = write(_with_coverage(seed_h200_211(), eager=dataclasses.replace(lost, attributed=1, unattributed=()),
                              default=full, **{"max-autotune": full}), tmp_path / "ok")
    res = runner.invoke(cli, ["check", str(ok), "--coverage"])
    assert (res.exit_code, res.output) == (0, "ok: --coverage hold for eager, default, max-autotune\n")
    # WHEN eager attributed 0 of its 1 GEMM-class op: THEN --coverage fails it (eager is checked without --mode)
    bad = write(_with_coverage(seed_h200_211(), eager=lost, default=full, **{"max-autotune": None}), tmp_path / "bad")
    res = runner.invoke(cli, ["check", str(bad), "--coverage"])
    assert res.exit_code == 1
    assert res.output.splitlines() == [
        "eager: 0 of 1 GEMM-class ops attributed to a kernel; not attributed: aten::cudnn_convolution stem.proj "
        "(launched only nchwToNhwcKernel, none of which computes a GEMM) (--coverage)",
        "max-autotune: GEMM coverage not derived (a result from before kernelscope reported it, or a compiled trace "
        "without its output code): profile again (--coverage)",
    ]
    # --mode names the modes checked: then only those
    res = runner.invoke(cli, ["check", str(bad), "--coverage", "--mode", "default"])
    assert (res.exit_code, res.output) == (0, "ok: --coverage hold for default\n")
