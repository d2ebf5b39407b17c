"""torch.compile(dynamic=True) across a sweep vs a static compile per shape. Pure (no torch).

The dynamic worker met every shape point in one process, so its Dynamo counters per point say what happened
there: a recompile (a guard failed: e.g. batch 1 is specialised by Dynamo's 0/1 rule, so the next batch size
recompiles) or a reuse of the graph compiled before. Each static mode compiled each shape in a fresh process.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelscope.analysis.stats import latency_ratio
from kernelscope.result import DynamicPoint, DynamicSummary, ModeResult, Status, SweepPoint

STATIC_PREFERENCE = ("default", "max-autotune")  # the static compile the dynamic mode is compared with


def _static_name(names: Sequence[str]) -> str | None:
    for n in STATIC_PREFERENCE:
        if n in names:
            return n
    return next((n for n in names if n not in ("eager", "dynamic")), None)


def _ok(m: ModeResult | None) -> bool:
    return m is not None and m.status == Status.OK.value and m.latency_ms is not None


def dynamic_summary(points: Sequence[SweepPoint], mode: str = "dynamic") -> DynamicSummary | None:
    """None when the run has no dynamic mode."""
    if not points or all(p.mode(mode) is None for p in points):
        return None
    static = _static_name([m.name for m in points[0].modes if m.name != mode])
    rows: list[DynamicPoint] = []
    total: int | None = 0
    graphs: int | None = 0
    for p in points:
        d = p.mode(mode)
        s = p.mode(static) if static else None
        dyn = d.dynamo if d is not None else None
        rec = dyn.recompiles if dyn is not None else None
        g = dyn.graphs if dyn is not None else None
        total = None if total is None or rec is None else total + int(rec)
        graphs = None if graphs is None or g is None else graphs + int(g)
        ratio = low = high = None
        call = "n/a"
        if _ok(d) and _ok(s):
            r = latency_ratio(d.latency_ms, s.latency_ms)  # type: ignore[union-attr]
            ratio, low, high = r.value, r.low, r.high
            if r.value is not None:
                call = "within noise" if r.within_noise else ("faster" if r.value < 1 else "slower")
        rows.append(DynamicPoint(
            label=p.label, recompiles=rec,
            guard_failures=dyn.guard_failures if dyn is not None else (),
            dynamic_ms=d.latency_ms.median if _ok(d) else None,  # type: ignore[union-attr]
            static_ms=s.latency_ms.median if _ok(s) else None,  # type: ignore[union-attr]
            ratio=ratio, low=low, high=high, call=call,
            dynamic_kernels=d.kernels_per_iter if d is not None else None,
            static_kernels=s.kernels_per_iter if s is not None else None,
        ))
    return DynamicSummary(mode=mode, static_mode=static, recompiles=total, graphs=graphs, points=tuple(rows))
