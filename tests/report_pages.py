"""Real results to render in the browser tests and for screenshots: the committed H200 runs (result.json) and
the 4-GEMM transformer block built from its committed captures (traces, Inductor code, logs) by kernelscope's
own analysis, so the pages show what a user gets."""

from __future__ import annotations

import json
from pathlib import Path

from kernelscope.report.io import load_result
from kernelscope.result import RunResult

DATA = Path(__file__).parent / "data"
RUNS = DATA / "h200-torch2.11-kernelscope-run"
CAPTURES = DATA / "h200-torch2.11-kernelscope"


def committed_runs() -> dict[str, RunResult]:
    return {d.name: load_result(d) for d in sorted(RUNS.iterdir()) if (d / "result.json").exists()}


def from_captures(model: str, modes: tuple[str, ...]) -> RunResult:
    """A RunResult from a captured model folder (modes/<mode>/capture.json + tb/<mode>/*.pt.trace.json.gz)."""
    from kernelscope.analysis.mode import build_mode_result, build_run_result
    from kernelscope.analysis.roofline import peaks_for
    from kernelscope.result import RunEnvironment, part_from_json

    root = CAPTURES / model
    recs = [json.loads((root / "modes" / m / "capture.json").read_text()) for m in modes]
    env = next((r["environment"] for r in recs if r.get("environment")), {})
    peaks = peaks_for(env, None) if env else {}
    results = []
    for m, rec in zip(modes, recs):
        if not rec.get("trace"):
            (trace,) = (root / "tb" / m).glob("*.pt.trace.json.gz")
            rec = {**rec, "trace": str(trace.relative_to(root))}
        results.append(build_mode_result(root, rec, peaks=peaks))
    return build_run_result(results, environment=part_from_json(RunEnvironment, env),
                            command=f"kernelscope profile samples/{model}.py",
                            model=f"samples/{model}.py", device=env.get("device", "cuda"),
                            dtype=recs[0].get("dtype", ""), settings={}, peaks=peaks)


def pages() -> dict[str, RunResult]:
    """Every page the browser checks: name -> result."""
    out = committed_runs()
    out["transformer_block"] = from_captures("transformer_block", ("eager", "default", "max-autotune"))
    return out
