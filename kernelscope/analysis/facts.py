"""What the reports show that is decided from the measurements, decided once and stored in the result.

``with_facts`` runs last when a RunResult is built (analysis/mode.py ``build_run_result``) and when an older
result.json is read (kernelscope/result_file.py migrates it): per mode the speedup vs eager at its shape, the
numerics verdict, what to do instead of a mode that did not run, the max-autotune table of each GEMM and the
groups of identical layers; per run the failures grouped once each, the tolerance row the numerics were judged
by, and the numeric parameter a sweep varies. The reports read these fields and derive nothing of their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from kernelscope.analysis.failures import failure_groups, fallback
from kernelscope.analysis.gemm.summary import mode_groups
from kernelscope.analysis.numerics import mode_numerics
from kernelscope.analysis.speedup import EAGER, speedup_vs
from kernelscope.analysis.sweep import numeric_axis
from kernelscope.result import ModeResult, RunResult, Status
from kernelscope.tolerance import Tolerance, tolerance_for


def with_facts(run: RunResult) -> RunResult:
    """``run`` with every derived fact filled in from its measurements (again, where it had them: the same
    measurements give the same facts)."""
    modes = modes_with_facts(run.modes, run.dtype)
    points = tuple(dataclasses.replace(p, modes=modes_with_facts(p.modes, run.dtype)) for p in run.points)
    return dataclasses.replace(
        run, modes=modes, points=points,
        failure_groups=failure_groups(m for m in modes if m.status != Status.OK.value),
        tolerance=run_tolerance(run),
        sweep_axis=numeric_axis([p.params for p in points]) if points else None,
    )


def modes_with_facts(modes: Sequence[ModeResult], dtype: str | None) -> tuple[ModeResult, ...]:
    """The modes of one shape, each with its speedup vs that shape's eager, its numerics verdict, its fallback
    advice, its GEMMs' autotune tables and its GEMM groups."""
    eager = next((m for m in modes if m.name == EAGER), None)
    eager_ok = eager if eager is not None and eager.status == Status.OK.value else None
    out = []
    for m in modes:
        out.append(dataclasses.replace(
            m, speedup=speedup_vs(m, eager_ok), numerics_verdict=mode_numerics(m, dtype),
            fallback=fallback(modes, m), gemm_autotune=autotune_tables(m),
            gemm_groups=mode_groups(m.gemms, m.gemm_groups) if m.gemms or m.gemm_groups else ()))
    return tuple(out)


def run_tolerance(run: RunResult) -> Tolerance:
    """The tolerance row the workers judged by (their recorded dtype), else the run's dtype's row."""
    recorded = next((m.numerics.tolerance.dtype for m in run.modes if m.numerics is not None
                     and m.numerics.tolerance is not None and m.numerics.tolerance.dtype), None)
    return tolerance_for(recorded or run.dtype)


def autotune_tables(m: ModeResult) -> dict[str, int]:
    """GEMM id -> the index in ``m.autotune`` of the max-autotune table that decided it (analysis/autotune.py
    ``autotune_for_gemm``: its own, or the one an identical earlier GEMM's selection key made)."""
    out = {}
    for g in m.gemms:
        i = next((i for i, table in enumerate(m.autotune) if table.serves(g.id)), None)
        if i is not None:
            out[g.id] = i
    return out
