"""Why an epilogue op was not fused: per backend, from the autotune table, the fusion log and the backend facts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kernelscope import vocab
from kernelscope.analysis import patterns
from kernelscope.analysis.gemm.dataflow import CodeGemm
from kernelscope.analysis.gemm.log import AutotuneTable, LogFacts, fusion_benchmark, table_matches
from kernelscope.analysis.gemm.model import (
    _FUSIBLE_BACKENDS,
    BIAS_OPS,
    VENDOR_BACKENDS,
    EpilogueOp,
    _Config,
    short_kernel_name,
)
from kernelscope.inductor_code import (
    OutputCode,
)
from kernelscope.result import Evidence, FusionBenchmark, WhyNot
from kernelscope.result import EvidenceRule as Rule
from kernelscope.result import WhyNotReason as Reason


@dataclass(frozen=True, slots=True)
class _Unfused:
    """What the why-not of one GEMM reads: its backend, the run's configuration and log, and the ops left out."""

    backend: str
    cfg: _Config
    log: LogFacts
    op: str
    labels: tuple[str, ...]  # the unfused ops' labels
    kernels: tuple[str, ...]  # the kernels they ran in
    table: AutotuneTable | None  # the autotune table for its op and sizes

    @property
    def ran(self) -> dict[str, Any]:
        """The facts every reason that names the unfused ops carries."""
        return {"ops": self.labels, "kernels": self.kernels}


def _why_not(
    backend: str,
    unfused: Sequence[EpilogueOp],
    cfg: _Config,
    log: LogFacts,
    *,
    op: str,
    m: int | None,
    n: int | None,
    k: int | None,
    code_gemm: CodeGemm | None,
    log_ops: Sequence[_CannotFuse],
    benchmarks: Sequence[FusionBenchmark] = (),
) -> tuple[list[WhyNot], list[Evidence]]:
    """(why-not reasons, evidence) for a GEMM whose epilogue is not all fused. ``log_ops``: the fusion log's
    "cannot fuse" lines about it; ``benchmarks``: its epilogue-fusion benchmarks (their evidence is the GEMM's
    own fusion-benchmark records)."""
    u = _Unfused(backend, cfg, log, op,
                 labels=tuple(dict.fromkeys(o.label for o in unfused)),
                 kernels=tuple(dict.fromkeys(short_kernel_name(o.kernel) for o in unfused if o.kernel)),
                 table=_autotune_for(log, op, m, n, k))
    if backend in VENDOR_BACKENDS:
        why, ev = _why_library(u)
    elif backend == patterns.NVGEMM:
        why, ev = _why_nvgemm(u, code_gemm)
    elif backend == patterns.CUTLASS:
        why, ev = [WhyNot.of(Reason.CUTLASS_NO_EPILOGUE, **u.ran)], []
    else:
        why, ev = _why_separate(u, unfused), []
    for more_why, more_ev in (_why_nvgemm_not_chosen(u), _why_decided(u, benchmarks, log_ops)):
        why += more_why
        ev += more_ev
    return why, ev


def _why_library(u: _Unfused) -> tuple[list[WhyNot], list[Evidence]]:
    """Why a library GEMM (cuBLAS, MKL/oneDNN) took no epilogue: eager, max-autotune off or unknown, the
    autotune's winner, or the backends offered."""
    why: list[WhyNot] = []
    ev: list[Evidence] = []
    cfg, table, backends = u.cfg, u.table, u.cfg.gemm_backends
    lib = "MKL/oneDNN" if cfg.device == "cpu" else "cuBLAS/cuBLASLt"
    if not cfg.compiled and cfg.device == "cpu":
        why.append(WhyNot.of(Reason.EAGER_CPU, **u.ran))
    elif not cfg.compiled:
        why.append(WhyNot.of(Reason.EAGER_LIBRARY, **u.ran, library=lib))
    elif cfg.max_autotune is None:
        why.append(WhyNot.of(Reason.MAX_AUTOTUNE_UNKNOWN, **u.ran, library=lib))
    elif not cfg.max_autotune:
        why.append(WhyNot.of(Reason.MAX_AUTOTUNE_OFF, **u.ran, library=lib))
    else:
        if table is not None:
            why.append(_autotune_winner(table, u))
            ev.append(_autotune_evidence(table))
        elif backends is not None and not set(backends) & _FUSIBLE_BACKENDS:
            why.append(WhyNot.of(Reason.NO_FUSIBLE_BACKEND, **u.ran, backends=backends))
        else:
            why.append(WhyNot.of(Reason.LIBRARY_GEMM, **u.ran, library=lib))
        if cfg.device == "cpu" and not cfg.freezing and (backends is None or "CPP" in backends):
            why.append(WhyNot.of(Reason.FREEZING_OFF))
    return why, ev


def _ms(t: float) -> float | None:
    """A choice's time as a fact: None for a choice that failed (Inductor prints inf)."""
    return None if math.isinf(t) else t


def _autotune_winner(table: AutotuneTable, u: _Unfused) -> WhyNot:
    """What the autotune table says of a library GEMM that ran: it won (over the best template, by how much), or
    identical layers shared a table that ranked a template first."""
    winner = table.choices[0]
    fusible = next((c for c in table.choices if _choice_backend(c[0]) != "ATen"), None)
    library = next((c for c in table.choices if _choice_backend(c[0]) == "ATen"), None)
    if _choice_backend(winner[0]) == "ATen":
        margin = fusible[1] / winner[1] - 1.0 if fusible is not None and 0 < winner[1] < math.inf else None
        return WhyNot.of(Reason.AUTOTUNE_PICKED, **u.ran, winner=winner[0], winner_ms=_ms(winner[1]),
                         template=fusible[0] if fusible else None, template_ms=_ms(fusible[1]) if fusible else None,
                         margin=margin if margin is not None and not math.isinf(margin) else None)
    # identical layers share one table per selection key; this GEMM still ran the library call
    return WhyNot.of(Reason.AUTOTUNE_RANKED_TEMPLATE, **u.ran, winner=winner[0], winner_ms=_ms(winner[1]),
                     library_choice=library[0] if library else None, library_ms=_ms(library[1]) if library else None)


def _autotune_evidence(table: AutotuneTable) -> Evidence:
    """The autotune table's line and its first choices, as evidence."""
    return Evidence.of(Rule.AUTOTUNE_TABLE, f"log:{table.line}", op=table.op, sizes=table.sizes, log_line=table.line,
                       choices=tuple(c for c, _ in table.choices[:4]),
                       times=tuple(_ms(t) for _, t in table.choices[:4]))


def _why_nvgemm(u: _Unfused, code_gemm: CodeGemm | None) -> tuple[list[WhyNot], list[Evidence]]:
    """Why an NVGEMM kernel took no epilogue: no epilogue-capable operator for this GPU, or none generated."""
    why: list[WhyNot] = []
    ev: list[Evidence] = []
    cfg = u.cfg
    if cfg.capability is not None and cfg.capability[0] < 10:
        why.append(WhyNot.of(Reason.NVGEMM_NO_EPILOGUE_OPERATOR, **u.ran, sm=cfg.sm))
    else:
        why.append(WhyNot.of(Reason.NVGEMM_NO_EPILOGUE, **u.ran))
    if (
        code_gemm is not None
        and code_gemm.template is not None
        and code_gemm.template.get("has_epilogue")
    ):
        t = code_gemm.template
        ev.append(Evidence.of(Rule.CODE_GEMM_OPERATOR, kernel=t.name, operator=str(t.get("operator")),
                              has_epilogue=str(t.get("has_epilogue"))))
    return why, ev


def _why_separate(u: _Unfused, unfused: Sequence[EpilogueOp]) -> list[WhyNot]:
    """Why an Inductor template's epilogue ops ran in kernels of their own: in the next GEMM's template, or
    separate (and whether a fusion log could say why)."""
    why: list[WhyNot] = []
    inside = [o for o in unfused if o.in_gemm]
    if inside and len(inside) == len(unfused):
        why.append(WhyNot.of(Reason.IN_NEXT_GEMM, **u.ran))
    else:
        why.append(WhyNot.of(Reason.SEPARATE_KERNEL, **u.ran))
    if not u.log.present:
        why.append(WhyNot.of(Reason.NO_FUSION_LOG))
    return why


def _why_nvgemm_not_chosen(u: _Unfused) -> tuple[list[WhyNot], list[Evidence]]:
    """Why NVGEMM, offered to the autotuner, did not run this GEMM: its choices failed to compile, or it has none
    for a bias op on this GPU."""
    why: list[WhyNot] = []
    ev: list[Evidence] = []
    cfg, log, backends = u.cfg, u.log, u.cfg.gemm_backends
    if backends is not None and "NVGEMM" in backends and u.backend != patterns.NVGEMM:
        if log.nvgemm_failed_choices:
            arch = f"{cfg.sm}a".replace("sm", "sm_") if cfg.sm else "the GPU's arch"
            count = len(log.nvgemm_failed_choices)
            why.append(WhyNot.of(Reason.NVGEMM_COMPILE_FAILED, count=count, error=log.nvgemm_error or None,
                                 arch=arch))
            ev.append(Evidence.of(Rule.NVGEMM_FAILED, f"log:{log.nvgemm_error_line}" if log.nvgemm_error else "",
                                  count=count, log_line=log.nvgemm_error_line if log.nvgemm_error else None,
                                  error=log.nvgemm_error or None))
        elif u.op in BIAS_OPS and cfg.capability is not None and cfg.capability[0] < 10:
            why.append(WhyNot.of(Reason.NVGEMM_NO_BIAS_CHOICE, op=u.op, sm=cfg.sm))
    return why, ev


def _why_decided(u: _Unfused, benchmarks: Sequence[FusionBenchmark], log_ops: Sequence[_CannotFuse]
                 ) -> tuple[list[WhyNot], list[Evidence]]:
    """What Inductor's own decisions add: a Triton template's autotune table, the epilogue-fusion benchmarks that
    rejected the fusion, the fusion log's "cannot fuse" reasons."""
    why: list[WhyNot] = []
    ev: list[Evidence] = []
    if u.backend == patterns.TRITON_TEMPLATE and u.table is not None:
        ev.append(_autotune_evidence(u.table))
    for fb in benchmarks:
        if fb.fused:
            continue
        # Inductor prints inf when no config of the fused kernel could run (e.g. out of shared memory)
        reason = Reason.FUSION_BENCHMARK_NO_CONFIG if fb.factor is None else Reason.FUSION_BENCHMARK_REJECTED
        why.append(WhyNot.of(reason, text=fb.text, factor=fb.factor, buffers=fb.buffers, log_line=fb.log_line))
    for c in log_ops:
        ev.append(Evidence.of(Rule.FUSION_LOG, f"log:{c.log_line}", log_line=c.log_line, node1=c.node1,
                              node2=c.node2, reason=c.reason))
    said = list(dict.fromkeys((c.node1, c.node2, c.reason) for c in log_ops))
    if said:
        why.append(WhyNot.of(Reason.FUSION_LOG, nodes1=tuple(a for a, _, _ in said),
                             nodes2=tuple(b for _, b, _ in said), reasons=tuple(r for _, _, r in said)))
    return why, ev


_choice_backend = vocab.choice_backend


def _autotune_for(
    log: LogFacts, op: str, m: int | None, n: int | None, k: int | None
) -> AutotuneTable | None:
    for t in log.autotune:
        if table_matches(t.op, t.sizes, op, m, n, k):
            return t
    return None


def _buffer_numbers(code: OutputCode, launch_ids: Sequence[int]) -> set[str]:
    """N of each bufN these launches write: scheduler node opN writes bufN, and the fusion log names both (a reuse
    alias names the new buffer)."""
    return {m for i in launch_ids for w in code.launches[i].writes for m in re.findall(r"^buf(\d+)$", w)}


@dataclass(frozen=True, slots=True)
class _CannotFuse:
    """One "cannot fuse" line of the fusion log: the two scheduler nodes and Inductor's reason."""

    node1: str
    node2: str
    reason: str
    log_line: int


def _fusion_log_lines(
    log: LogFacts, code: OutputCode, cg: CodeGemm, unfused_launches: Sequence[int], single_graph: bool
) -> list[_CannotFuse]:
    """Fusion-log "cannot fuse" lines about this GEMM and the kernels its epilogue ran in (scheduler node opN
    writes bufN); its epilogue-fusion benchmarks are ``fusion_benchmarks_for``'s."""
    if not single_graph:
        return []

    g = _buffer_numbers(code, [cg.launch.index])
    e = _buffer_numbers(code, unfused_launches)
    lines: list[_CannotFuse] = []
    said: set[tuple[str, str, str]] = set()  # each fusion round repeats the same verdicts
    for n1, n2, reason, ln in log.cannot_fuse_about(g, e):
        if (n1, n2, reason) not in said:
            said.add((n1, n2, reason))
            lines.append(_CannotFuse(n1, n2, reason, ln))
    return lines


def fusion_benchmarks_for(
    log: LogFacts, code: OutputCode, cg: CodeGemm, unfused_launches: Sequence[int], single_graph: bool
) -> tuple[FusionBenchmark, ...]:
    """The epilogue-fusion benchmarks that decided this GEMM (buffer names are the graph's own, so one graph
    only): one that kept them apart names the GEMM's buffer first and a buffer of a kernel its epilogue ran in
    second; one that fused them names, second, the buffer the fused kernel (this GEMM's launch) writes."""
    if not single_graph or not log.benchmark:
        return ()
    g = _buffer_numbers(code, [cg.launch.index])
    e = _buffer_numbers(code, unfused_launches)
    out = []
    for entry in log.benchmarks_deciding(g):
        b1, b2, text, _ = entry
        if text.endswith("speedup") or {x[3:] for x in b2} & e:
            out.append(fusion_benchmark(entry))
    return tuple(out)


def _why_from_trace(backend: str, ops: Sequence[Any], cfg: Any, *, op: str, m: int | None, n: int | None,
                    k: int | None) -> tuple[list[WhyNot], list[Evidence]]:
    """(why-not, evidence) for a GEMM known from the trace alone (eager op tree or kernel sequence): no output
    code and no log facts to draw on."""
    unfused = [o for o in ops if not o.fused]
    if not unfused:
        return [], []
    why, more = _why_not(backend, unfused, cfg, LogFacts(), op=op, m=m, n=n, k=k, code_gemm=None, log_ops=())
    return list(why), list(more)

