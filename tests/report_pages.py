"""Real results to render in the browser tests and for screenshots: the committed H200 runs (result.json) and
the 4-GEMM transformer block built from its committed captures (traces, Inductor code, logs) by kernelscope's
own analysis, so the pages show what a user gets."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernelscope.report.io import load_result
from kernelscope.result import GemmEpilogue, ModeResult, RunResult

DATA = Path(__file__).parent / "data"
RUNS = DATA / "h200-torch2.11-kernelscope-run"
CAPTURES = DATA / "h200-torch2.11-kernelscope"


def committed_runs() -> dict[str, RunResult]:
    return {d.name: load_result(d) for d in sorted(RUNS.iterdir()) if (d / "result.json").exists()}


def from_captures(model: str, modes: tuple[str, ...], root: Path | None = None) -> RunResult:
    """A RunResult from a captured model folder (modes/<mode>/capture.json + tb/<mode>/*.pt.trace.json.gz);
    ``root`` defaults to the model's folder of the h200-torch2.11-kernelscope captures."""
    from kernelscope.analysis.mode import build_mode_result, build_run_result
    from kernelscope.analysis.roofline import peaks_for
    from kernelscope.result import RunEnvironment, part_from_json

    root = root or CAPTURES / model
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
    out["llama-16-layers"] = llama_layers(16, differ=(7, "mlp.up_proj"))
    return out


# ---------------------------------------------------------------------------------------------------------------
# An N-layer model built from a real 2-layer one, for the tests of output that must not grow with the model.
REAL_MODELS = DATA / "h200-torch2.11-real-models"
_LAYER = re.compile(r"\blayers\.(\d+)\.")


@functools.lru_cache(maxsize=1)
def _llama_block() -> RunResult:
    """The recorded H200 llama_block (2 identical decoder layers, 14 GEMMs per mode), analysed by kernelscope."""
    return from_captures("llama_block", ("eager", "default", "max-autotune"), root=REAL_MODELS / "llama_block")


# What differs from layer to layer in real evidence besides the module path: the output code's line numbers, its
# buffers and scheduler nodes, the profiler's op ids and the compile log's lines (the kernels do not: Inductor
# launches one definition for every identical layer).
_PER_LAYER = re.compile(r"(?<=graph_\d\.py:)\d+|(?<=\bbuf)\d+|(?<=\bop)\d+|(?<=External id )\d+"
                        r"|(?<=log line )\d+|(?<=log:)\d+")


def _renamed(text: str, layer: int) -> str:
    text = _LAYER.sub(f"layers.{layer}.", text)
    return _PER_LAYER.sub(lambda m: str(int(m.group(0)) + 40 * layer), text) if layer > 1 else text


def _renamed_facts(facts: Mapping[str, Any], layer: int) -> dict[str, Any]:
    """Evidence or why-not facts as another layer's: its names, code lines, buffers, op ids and log lines."""
    def one(key: str, v: Any) -> Any:
        if isinstance(v, str):
            return _renamed(v, layer)
        if isinstance(v, tuple):
            return tuple(one(key, x) for x in v)
        if isinstance(v, int) and not isinstance(v, bool) and key in ("external_id", "log_line") and layer > 1:
            return v + 40 * layer
        return v
    return {k: one(k, v) for k, v in facts.items()}


def _layer_copy(g: GemmEpilogue, layer: int, gemm_id: str) -> GemmEpilogue:
    return dataclasses.replace(
        g, id=gemm_id, module=_renamed(g.module, layer), group="",
        why_not=tuple(dataclasses.replace(r, facts=_renamed_facts(r.facts, layer)) for r in g.why_not),
        evidence=tuple(dataclasses.replace(e, facts=_renamed_facts(e.facts, layer), where=_renamed(e.where, layer))
                       for e in g.evidence))


def _scaled_mode(m: ModeResult, layers: int, differ: tuple[int, str] | None) -> ModeResult:
    from kernelscope.analysis.gemm.summary import group_gemms, summarize

    first = [g for g in m.gemms if g.module.startswith("layers.0.")]
    last = [g for g in m.gemms if g.module.startswith("layers.1.")]
    assert len(first) == len(last) == len(m.gemms) // 2, "a 2-layer model, every GEMM in a layer"
    gemms: list[GemmEpilogue] = []
    new_ids: dict[str, list[str]] = {}
    for layer in range(layers):
        # every layer but the last is layer 0 again; the last is layer 1 (its down_proj feeds the graph output)
        for g in first if layer < layers - 1 else last:
            copy = _layer_copy(g, layer, f"gemm{len(gemms)}")
            if differ is not None and differ == (layer, copy.module.split(".", 2)[2]):
                # this one layer fused its epilogue: the one layer a reader must be told about
                copy = dataclasses.replace(copy, verdict="fused", fused=copy.unfused, unfused=(), unfused_kernels=(),
                                           why_not=(), costs=())
            gemms.append(copy)
            new_ids.setdefault(g.id, []).append(copy.id)
    grouped, groups = group_gemms(gemms)
    autotune = tuple(
        dataclasses.replace(a, gemm=new_ids[a.gemm][0] if a.gemm in new_ids else a.gemm,
                            gemms=tuple(i for old in (a.gemms or (a.gemm,)) for i in new_ids.get(old or "", ())))
        for a in m.autotune)
    scale = layers / 2
    kernels = tuple(dataclasses.replace(k, calls_per_iter=k.calls_per_iter * scale,
                                        time_us_per_iter=k.time_us_per_iter * scale) for k in m.kernels)
    span = max((t.start_us + t.dur_us for t in m.timeline), default=0.0)
    timeline = tuple(dataclasses.replace(t, start_us=t.start_us + span * i)
                     for i in range(max(1, round(scale))) for t in m.timeline)
    cost = m.epilogue_cost and dataclasses.replace(
        m.epilogue_cost, kernels=round(m.epilogue_cost.kernels * scale), of_kernels=len(timeline),
        time_us_per_iter=m.epilogue_cost.time_us_per_iter * scale)
    return dataclasses.replace(
        m, gemms=grouped, gemm_groups=groups, gemm_summary=summarize(grouped), autotune=autotune, kernels=kernels,
        timeline=timeline, kernels_per_iter=(m.kernels_per_iter or 0) * scale, epilogue_cost=cost,
        gpu_time_us_per_iter=(m.gpu_time_us_per_iter or 0) * scale)


def llama_layers(layers: int, *, differ: tuple[int, str] | None = None) -> RunResult:
    """A Llama of ``layers`` identical decoder layers in three modes (eager, default, max-autotune): the recorded
    2-layer llama_block's GEMM records repeated layer by layer (ids, module paths, evidence and autotune tables
    renamed through the result's types), kernel counts and the timeline scaled to match. ``differ=(7,
    "mlp.up_proj")``: that layer's GEMM fused its epilogue where every other layer's did not."""
    base = _llama_block()
    return dataclasses.replace(base, model=f"llama_{layers}_layers.py",
                               modes=tuple(_scaled_mode(m, layers, differ) for m in base.modes))
