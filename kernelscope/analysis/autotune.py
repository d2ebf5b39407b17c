"""max-autotune tables per GEMM, from the worker's log: the candidates, their times, the winner. Pure.

``gemm.parse_log`` finds the tables (``AUTOTUNE addmm(16x4096, ...)`` and its rows); this module keeps each row's
printed detail (Triton config, share of the winner), the ``dtypes:`` line and the ``... for N choices`` summary,
ties each table to the GEMM verdict it belongs to, and says which requested backends offered no choice at all:
the short answer to "why was NVGEMM not used".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from kernelscope import vocab
from kernelscope.analysis.gemm import AutotuneTable, log_line, parse_log, table_matches
from kernelscope.analysis.gemm.log import LogFacts, fusion_benchmark_facts
from kernelscope.result import AutotuneChoice, AutotuneResult, FusionBenchmark, GemmEpilogue, Note

_ROW = re.compile(r"^\s+(\S+) (inf|[\d.]+(?:e[-+]?\d+)?) ms\b\s*(.*)$")
_SUMMARY = re.compile(r"AUTOTUNE benchmarking takes ([\d.]+) seconds and ([\d.]+) seconds precompiling for (\d+) "
                      r"choices")

_REQUESTED = vocab.CHOICE_LABEL_OF_BACKEND


# A winner whose margin over the best choice of another kind is below this is "marginal": Inductor benchmarks
# each choice once per compile, in that process, and a fresh process's timings of the same kernels move by a
# few percent (on the H200 15 of 86 max-autotune graphs changed launch structure between two identical runs:
# tests/data/h200-torch2.11-max-autotune-repeat).
MARGINAL = 0.05


def margin_of(choices: Sequence[AutotuneChoice], winner: AutotuneChoice) -> tuple[float | None, AutotuneChoice | None]:
    """(best other kind's time / winner's time - 1, that choice); (None, None) when no other kind has a time."""
    if winner.time_ms is None or winner.time_ms <= 0:
        return None, None
    others = [c for c in choices if c.backend != winner.backend and c.time_ms is not None]
    if not others:
        return None, None
    best = min(others, key=lambda c: c.time_ms)  # type: ignore[arg-type,return-value]
    return best.time_ms / winner.time_ms - 1.0, best  # type: ignore[operator]


choice_backend = vocab.choice_backend


def _details(lines: list[str], table: AutotuneTable) -> tuple[dict[str, str], str, int | None]:
    """Per-choice printed detail, the dtypes line, and the number of choices benchmarked (from the summary)."""
    details: dict[str, str] = {}
    dtypes = ""
    n_choices = None
    for raw in lines[table.line: table.line + len(table.choices) + 8]:
        line = log_line(raw)
        if line.startswith("dtypes:"):
            dtypes = line.split(":", 1)[1].strip()
            continue
        row = _ROW.match(line)
        if row:
            details.setdefault(row.group(1), row.group(3).strip())
            continue
        s = _SUMMARY.search(line)
        if s:
            n_choices = int(s.group(3))
            break
        if line.startswith("AUTOTUNE "):
            break
    return details, dtypes, n_choices


def _matches(table: AutotuneTable, g: GemmEpilogue) -> bool:
    return table_matches(table.op, table.sizes, g.op, g.m, g.n, g.k, g.batch)


# A Triton template's launch config, as a table row prints it ("BLOCK_K=128, BLOCK_M=64, BLOCK_N=32, ...
# num_stages=5, num_warps=4") and as the kernel's definition states it (inductor_meta's 'config_args' and the
# decorator's num_stages=/num_warps=): what ties a table to the kernel that ran when several tables have one key.
_CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_stages", "num_warps")
_ROW_CFG = re.compile(r"\b(BLOCK_M|BLOCK_N|BLOCK_K|GROUP_M|num_stages|num_warps)=(\d+)")
_SRC_CFG = re.compile(r"(?:'(BLOCK_M|BLOCK_N|BLOCK_K|GROUP_M)': (\d+))|(?:\b(num_stages|num_warps)=(\d+))")


def row_config(detail: str) -> tuple[tuple[str, int], ...]:
    """A Triton choice's tile config from its printed detail; () for choices that print none."""
    got = dict((k, int(v)) for k, v in _ROW_CFG.findall(detail))
    return tuple((k, got[k]) for k in _CONFIG_KEYS if k in got) if "BLOCK_M" in got else ()


def kernel_config(source: str) -> tuple[tuple[str, int], ...]:
    """A Triton template kernel's tile config from its definition; () when it states none."""
    got: dict[str, int] = {}
    for a, b, c, d in _SRC_CFG.findall(source[:20000]):
        key, val = (a, b) if a else (c, d)
        got.setdefault(key, int(val))
    return tuple((k, got[k]) for k in _CONFIG_KEYS if k in got) if "BLOCK_M" in got else ()


_LIBRARY = vocab.LIBRARY_GEMM_BACKENDS


def _fits(winner: AutotuneChoice, g: GemmEpilogue, configs: Mapping[str, tuple[tuple[str, int], ...]]) -> bool | None:
    """Whether the kernel GEMM ``g`` ran is this table's winner: True / False when the code says, None when
    it cannot (no code, or a winner that prints no config)."""
    ran = configs.get(g.kernels[0]) if g.kernels else None
    if winner.backend == "Triton":
        want = row_config(winner.detail)
        if ran and want:
            return dict(ran) == dict(want) or all(dict(ran).get(k) == v for k, v in want)
        return False if g.backend in _LIBRARY else None
    if winner.backend == "ATen":
        return g.backend in _LIBRARY if g.backend else None
    return None


def autotune_results(log_text: str | None, gemms: Sequence[GemmEpilogue],
                     requested_backends: Sequence[str] | None = None,
                     kernel_sources: Mapping[str, str] | None = None,
                     facts: LogFacts | None = None) -> tuple[AutotuneResult, ...]:
    """Every AUTOTUNE table of a compile log, tied to the mode's GEMMs by the exact selection key. Several
    tables can print one key (Inductor benchmarked it again); ``kernel_sources`` (kernel name -> its definition,
    from the output code) lets a table go to the GEMMs that ran its winner (same Triton tile config, or a
    library kernel for an ATen winner); otherwise the first unclaimed GEMM of that key takes it. ``facts``: the
    log's facts when the caller parsed it already."""
    facts = parse_log(log_text) if facts is None else facts
    if not facts.autotune:
        return ()
    configs = {name: cfg for name, src in (kernel_sources or {}).items() if (cfg := kernel_config(src))}
    lines = (log_text or "").splitlines()
    claimed: set[str] = set()
    out: list[AutotuneResult] = []
    winners: list[AutotuneChoice] = []
    for t in facts.autotune:
        details, dtypes, n_choices = _details(lines, t)
        choices = tuple(AutotuneChoice(name, None if ms == float("inf") else ms, choice_backend(name),
                                       details.get(name, "")) for name, ms in t.choices)
        timed = [c for c in choices if c.time_ms is not None]
        winner = min(timed, key=lambda c: c.time_ms) if timed else choices[0]  # type: ignore[arg-type,return-value]
        best: dict[str, float | None] = {}
        for c in choices:
            prev = best.get(c.backend)
            if c.time_ms is not None and (prev is None or c.time_ms < prev):
                best[c.backend] = c.time_ms
            else:
                best.setdefault(c.backend, prev)
        absent = tuple(b for b in (requested_backends or ()) if _REQUESTED.get(b.upper(), b) not in best)
        truncated = n_choices is not None and n_choices > len(choices)
        # Only a complete table shows that a backend offered nothing; a truncated one just did not print it.
        missing = () if truncated else absent
        winners.append(winner)
        keyed = [g for g in gemms if _matches(t, g)]
        gemm = next((g.id for g in keyed if g.id not in claimed and _fits(winner, g, configs) is True), None)
        if gemm is None:
            gemm = next((g.id for g in keyed if g.id not in claimed and _fits(winner, g, configs) is not False), None)
        if gemm is None:
            gemm = next((g.id for g in keyed if g.id not in claimed), None)
        if gemm is None:
            gemm = next((g.id for g in keyed), None)
        if gemm is not None:
            claimed.add(gemm)
        notes = []
        if truncated:
            notes.append(Note("autotune-truncated", {"shown": len(choices), "of": n_choices, "absent": list(absent)}))
        if missing:
            notes.append(Note("autotune-no-choice", {"backends": list(missing)}))
        ran = next((g for g in gemms if g.id == gemm), None)
        if ran is not None and ran.backend and winner.backend == "ATen" and ran.backend == "Triton template":
            # Inductor benchmarked the template with the epilogue fused in (benchmark_epilogue_fusion) after
            # this table and kept it: the table's winner is not what ran
            notes.append(Note("autotune-template-ran", {"winner": winner.name}))
        elif ran is not None and ran.backend and winner.backend in ("Triton",) and \
                ran.backend in vocab.LIBRARY_BACKENDS:
            notes.append(Note("autotune-library-ran", {"winner": winner.name, "backend": ran.backend}))
        margin, runner = margin_of(choices, winner)
        marginal = margin is not None and margin < MARGINAL
        if marginal and ran is not None and any(fb.fused for fb in ran.fusion_benchmarks):
            # The epilogue-fusion benchmark ran after this table and fused a template: what ran was its call,
            # and a table won by the other kind would have led to the same fused template.
            marginal = False
            notes.append(Note("autotune-fusion-decided", {"winner_backend": winner.backend, "margin": margin}))
        if marginal and runner is not None:
            notes.append(Note("autotune-table-marginal", {
                "winner_backend": winner.backend, "margin": margin, "runner_up": runner.name,
                "runner_up_backend": runner.backend, "noise": MARGINAL}))
        out.append(AutotuneResult(
            gemm=gemm, gemms=(gemm,) if gemm else (), op=t.op, sizes=t.sizes, choices=choices, winner=winner.name,
            winner_backend=winner.backend,
            dtypes=dtypes, n_choices=n_choices, best_by_backend=best, missing_backends=missing, log_line=t.line,
            notes=tuple(notes), margin=margin, runner_up=runner.name if runner else "",
            runner_up_backend=runner.backend if runner else "", marginal=marginal,
        ))
    return _share_tables(out, facts.autotune, winners, gemms, claimed, configs)


def _share_tables(out: list[AutotuneResult], tables: Sequence[AutotuneTable], winners: Sequence[AutotuneChoice],
                  gemms: Sequence[GemmEpilogue], claimed: set[str],
                  configs: Mapping[str, tuple[tuple[str, int], ...]]) -> tuple[AutotuneResult, ...]:
    """GEMMs no table claimed but whose exact selection key a table has: Inductor's autotune cache served them
    from that table (identical layers), so they join its ``gemms``: the table whose winner they ran, else the
    last table of that key."""
    extra: dict[int, list[str]] = {}
    for g in gemms:
        if g.id in claimed:
            continue
        keyed = [i for i in range(len(tables)) if _matches(tables[i], g)]
        fit = [i for i in keyed if _fits(winners[i], g, configs) is True]
        pick = fit[-1] if fit else next((i for i in reversed(keyed) if _fits(winners[i], g, configs) is not False),
                                        keyed[-1] if keyed else None)
        if pick is not None:
            extra.setdefault(pick, []).append(g.id)
    for i, ids in extra.items():
        r = out[i]
        out[i] = dataclasses.replace(r, gemms=r.gemms + tuple(ids))
    return tuple(out)


def close_decisions(g: GemmEpilogue, table: AutotuneResult | None
                    ) -> tuple[AutotuneResult | None, tuple[FusionBenchmark, ...]]:
    """The compile-time benchmarks that decided GEMM ``g`` by a margin inside their own noise, so another compile
    of the same code may give it another backend or verdict: (its autotune table when marginal, else None; its
    marginal epilogue-fusion benchmarks). An epilogue-fusion benchmark that fused runs after the autotune table and
    decides alone; otherwise a marginal table and a marginal fusion benchmark that kept the epilogue apart both
    count."""
    fused = [fb for fb in g.fusion_benchmarks if fb.fused]
    close = tuple(fb for fb in (fused or g.fusion_benchmarks) if fb.marginal)
    return (None if fused or table is None or not table.marginal else table), close


def decision_notes(g: GemmEpilogue, table: AutotuneResult | None) -> tuple[Note, ...]:
    """``close_decisions`` as notes ("autotune-marginal": the table's winner, margin and runner-up;
    "fusion-benchmark-marginal": the benchmark's facts); () when nothing was close."""
    marginal, close = close_decisions(g, table)
    notes = [] if marginal is None else [Note("autotune-marginal", {
        "winner_backend": marginal.winner_backend, "margin": marginal.margin, "runner_up": marginal.runner_up,
        "runner_up_backend": marginal.runner_up_backend})]
    notes += [Note("fusion-benchmark-marginal", fusion_benchmark_facts(fb)) for fb in close]
    return tuple(notes)


def autotune_for_gemm(results: Sequence[AutotuneResult], gemm_id: str) -> AutotuneResult | None:
    """The table that decided a GEMM: its own, or the one an identical earlier GEMM's selection key made (a GEMM
    joins one table only: its own claim, or a share of an unclaimed one)."""
    return next((r for r in results if r.serves(gemm_id)), None)
