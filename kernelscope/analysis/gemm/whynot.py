"""Why an epilogue op was not fused: per backend, from the autotune table, the fusion log and the backend facts.
"""

from __future__ import annotations

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
from kernelscope.result import FusionBenchmark


@dataclass(frozen=True, slots=True)
class _Unfused:
    """What the why-not of one GEMM reads: its backend, the run's configuration and log, and the ops left out."""

    backend: str
    cfg: _Config
    log: LogFacts
    op: str
    labels: str  # the unfused ops' labels, for the sentences
    kernels: str  # the kernels they ran in
    table: AutotuneTable | None  # the autotune table for its op and sizes


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
    log_ops: Sequence[str],
    benchmarks: Sequence[FusionBenchmark] = (),
) -> tuple[list[str], list[str]]:
    """(why-not sentences, evidence) for a GEMM whose epilogue is not all fused. ``log_ops``: the fusion log's
    "cannot fuse" lines about it; ``benchmarks``: its epilogue-fusion benchmarks (their evidence is the GEMM's
    own "[fusion-benchmark]" lines)."""
    u = _Unfused(backend, cfg, log, op,
                 labels=", ".join(dict.fromkeys(o.label for o in unfused)),
                 kernels=", ".join(dict.fromkeys(short_kernel_name(o.kernel) for o in unfused if o.kernel)),
                 table=_autotune_for(log, op, m, n, k))
    if backend in VENDOR_BACKENDS:
        why, ev = _why_library(u)
    elif backend == patterns.NVGEMM:
        why, ev = _why_nvgemm(u, code_gemm)
    elif backend == patterns.CUTLASS:
        why, ev = [
            "Inductor's CUTLASS C++ GEMM carries no epilogue (EVT epilogue fusion is off unless "
            f"CUTLASS_EPILOGUE_FUSION=1); {u.labels} ran in {u.kernels}"
        ], []
    else:
        why, ev = _why_separate(u, unfused), []
    for more_why, more_ev in (_why_nvgemm_not_chosen(u), _why_decided(u, benchmarks, log_ops)):
        why += more_why
        ev += more_ev
    return why, ev


def _why_library(u: _Unfused) -> tuple[list[str], list[str]]:
    """Why a library GEMM (cuBLAS, MKL/oneDNN) took no epilogue: eager, max-autotune off or unknown, the
    autotune's winner, or the backends offered."""
    why: list[str] = []
    ev: list[str] = []
    cfg, labels, kernels, table, backends = u.cfg, u.labels, u.kernels, u.table, u.cfg.gemm_backends
    lib = "MKL/oneDNN" if cfg.device == "cpu" else "cuBLAS/cuBLASLt"
    if not cfg.compiled and cfg.device == "cpu":
        why.append(
            f"eager: ATen runs {labels} as separate ops ({kernels}); the CPU GEMM call applies no "
            "epilogue"
        )
    elif not cfg.compiled:
        why.append(
            f"eager: ATen runs {labels} as separate kernels ({kernels}); a {lib} GEMM call only takes a "
            "bias "
            "(cuBLASLt epilogue) or, through torch._addmm_activation, a GELU/ReLU"
        )
    elif cfg.max_autotune is None:
        why.append(
            f"Inductor called the ATen/{lib} GEMM, which cannot take an Inductor epilogue; {labels} ran in "
            f"{kernels} (whether max-autotune was on is not known)"
        )
    elif not cfg.max_autotune:
        why.append(
            f"max-autotune is off, so Inductor called the ATen/{lib} GEMM, which cannot take an Inductor "
            "epilogue; "
            f"{labels} ran in {kernels}"
        )
    else:
        if table is not None:
            why.append(_autotune_winner(table) + f"; a library GEMM cannot take an Inductor epilogue, so {labels} "
                       f"ran in {kernels}")
            ev.append(_autotune_evidence(table))
        elif backends is not None and not set(backends) & _FUSIBLE_BACKENDS:
            why.append(
                f"max_autotune_gemm_backends={','.join(backends)} offers no template that can take an "
                f"epilogue; {labels} ran in {kernels}"
            )
        else:
            why.append(
                f"the autotuner picked the ATen/{lib} GEMM, which cannot take an Inductor epilogue; "
                f"{labels} ran in {kernels}"
            )
        if cfg.device == "cpu" and not cfg.freezing and (backends is None or "CPP" in backends):
            why.append(
                "Inductor's C++ GEMM template needs constant weights (freezing=True), which was off"
            )
    return why, ev


def _autotune_winner(table: AutotuneTable) -> str:
    """What the autotune table says of a library GEMM that ran: it won, or identical layers shared a table that
    ranked a template first."""
    winner = table.choices[0]
    fusible = next((c for c in table.choices if _choice_backend(c[0]) != "ATen"), None)
    library = next((c for c in table.choices if _choice_backend(c[0]) == "ATen"), None)
    if _choice_backend(winner[0]) == "ATen":
        text = f"the library GEMM {winner[0]} ({winner[1]:.4f} ms) won the autotune"
        if fusible is not None:
            text += f" over {fusible[0]} ({fusible[1]:.4f} ms)"
        return text
    # identical layers share one table per selection key; this GEMM still ran the library call
    return (f"the library GEMM ran although the autotune table for these sizes ranked {winner[0]} "
            f"({winner[1]:.4f} ms) first" + (f" and {library[0]} at {library[1]:.4f} ms"
                                             if library else ""))


def _autotune_evidence(table: AutotuneTable) -> str:
    """The autotune table's line and its first choices, as evidence."""
    return (f"[autotune-log] AUTOTUNE {table.op}({table.sizes}) at log line {table.line}: "
            + ", ".join(f"{c} {t:.4f} ms" for c, t in table.choices[:4]))


def _why_nvgemm(u: _Unfused, code_gemm: CodeGemm | None) -> tuple[list[str], list[str]]:
    """Why an NVGEMM kernel took no epilogue: no epilogue-capable operator for this GPU, or none generated."""
    why: list[str] = []
    ev: list[str] = []
    cfg = u.cfg
    if cfg.capability is not None and cfg.capability[0] < 10:
        why.append(
            f"NVGEMM on {cfg.sm}: cutlass.operators has no epilogue-fusion-capable operator for this GPU "
            "(those "
            f"target SM100), so {u.labels} ran in {u.kernels}"
        )
    else:
        why.append(f"the NVGEMM kernel was generated without an epilogue; {u.labels} ran in {u.kernels}")
    if (
        code_gemm is not None
        and code_gemm.template is not None
        and code_gemm.template.get("has_epilogue")
    ):
        t = code_gemm.template
        ev.append(
            f"[code-gemm] {t.name} runs {t.get('operator')} with has_epilogue={t.get('has_epilogue')}"
        )
    return why, ev


def _why_separate(u: _Unfused, unfused: Sequence[EpilogueOp]) -> list[str]:
    """Why an Inductor template's epilogue ops ran in kernels of their own: in the next GEMM's template, or
    separate (and whether a fusion log could say why)."""
    why: list[str] = []
    inside = [o for o in unfused if o.in_gemm]
    if inside and len(inside) == len(unfused):
        why.append(f"{u.labels} ran in the next GEMM's template ({u.kernels}), which reads this GEMM's result "
                   "back from memory: fused there, not here")
    else:
        why.append(f"{u.labels} left in a separate kernel ({u.kernels})")
    if not u.log.present:
        why.append(
            "no fusion log was captured to say why (TORCH_LOGS=fusion shows Inductor's fusion decisions)"
        )
    return why


def _why_nvgemm_not_chosen(u: _Unfused) -> tuple[list[str], list[str]]:
    """Why NVGEMM, offered to the autotuner, did not run this GEMM: its choices failed to compile, or it has none
    for a bias op on this GPU."""
    why: list[str] = []
    ev: list[str] = []
    cfg, log, backends = u.cfg, u.log, u.cfg.gemm_backends
    if backends is not None and "NVGEMM" in backends and u.backend != patterns.NVGEMM:
        if log.nvgemm_failed_choices:
            arch = f"{cfg.sm}a".replace("sm", "sm_") if cfg.sm else "the GPU's arch"
            err = f": {log.nvgemm_error}" if log.nvgemm_error else ""
            why.append(
                f"every NVGEMM choice failed to compile in the autotune workers "
                f"({len(log.nvgemm_failed_choices)} choices{err}); set CUTE_DSL_ARCH={arch}"
            )
            ev.append(
                f"[nvgemm-log] {len(log.nvgemm_failed_choices)} NVUniversalGemmCaller choices failed"
                + (f" (log line {log.nvgemm_error_line}: {log.nvgemm_error})" if log.nvgemm_error else "")
            )
        elif u.op in BIAS_OPS and cfg.capability is not None and cfg.capability[0] < 10:
            why.append(
                f"NVGEMM offers no choice for {u.op} on {cfg.sm}: its bias needs an epilogue-capable "
                "operator, and cutlass.operators has those for SM100 only"
            )
    return why, ev


def _why_decided(u: _Unfused, benchmarks: Sequence[FusionBenchmark], log_ops: Sequence[str]
                 ) -> tuple[list[str], list[str]]:
    """What Inductor's own decisions add: a Triton template's autotune table, the epilogue-fusion benchmarks that
    rejected the fusion, the fusion log's "cannot fuse" reasons."""
    why: list[str] = []
    ev: list[str] = []
    if u.backend == patterns.TRITON_TEMPLATE and u.table is not None:
        ev.append(_autotune_evidence(u.table))
    for fb in benchmarks:
        if fb.fused:
            continue
        if fb.factor is None:
            # Inductor prints inf when no config of the fused kernel could run (e.g. out of shared memory)
            why.append(f"benchmark_epilogue_fusion rejected the fused template: none of its configs ran ({fb.text})")
        else:
            why.append(f"benchmark_epilogue_fusion judged the fused template slower ({fb.text})")
    reasons: list[str] = []
    for line in log_ops:
        reasons.append(line.split(": ", 1)[-1])  # "cannot fuse op15 with op16: no shared data"
        ev.append(f"[fusion-log] {line}")
    if reasons:
        why.append("Inductor's fusion log: " + "; ".join(dict.fromkeys(reasons)))
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


def _fusion_log_lines(
    log: LogFacts, code: OutputCode, cg: CodeGemm, unfused_launches: Sequence[int], single_graph: bool
) -> list[str]:
    """Fusion-log "cannot fuse" lines about this GEMM and the kernels its epilogue ran in (scheduler node opN
    writes bufN); its epilogue-fusion benchmarks are ``fusion_benchmarks_for``'s."""
    if not single_graph:
        return []

    g = _buffer_numbers(code, [cg.launch.index])
    e = _buffer_numbers(code, unfused_launches)
    lines: list[str] = []
    said: set[tuple[str, str, str]] = set()  # each fusion round repeats the same verdicts
    for n1, n2, reason, ln in log.cannot_fuse_about(g, e):
        if (n1, n2, reason) not in said:
            said.add((n1, n2, reason))
            lines.append(f"log line {ln}: cannot fuse {n1} with {n2}: {reason}")
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
                    k: int | None) -> tuple[list[str], list[str]]:
    """(why-not, evidence) for a GEMM known from the trace alone (eager op tree or kernel sequence): no output
    code and no log facts to draw on."""
    unfused = [o for o in ops if not o.fused]
    if not unfused:
        return [], []
    why, more = _why_not(backend, unfused, cfg, LogFacts(), op=op, m=m, n=n, k=k, code_gemm=None, log_ops=())
    return list(why), list(more)

