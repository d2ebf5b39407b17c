"""Fusion advice: for every GEMM group whose epilogue a mode left (partly) unfused, the settings that could fuse it,
and once those settings ran as modes of their own, what each run shows.

Pure functions over the result, in two steps:

- ``plan_advice(modes, environment)``: the candidates, decided from the cause the group's why-not names (its
  ``WhyNotReason`` codes and evidence rules, never its words). A library GEMM under default or eager: max-autotune
  with a GEMM template backend that takes epilogues (TRITON, CUTLASS with its epilogue fusion on, NVGEMM where the
  GPU has an epilogue operator; CPP on the CPU, with freezing); autotune picked the library over a template by less
  than the epilogue costs: the same backends without ATEN; Inductor's epilogue-fusion benchmark rejected the
  fusion: the mode with that benchmark off; eager: a compiled mode of the run that fuses it. Ops that run inside the
  reduction or norm reading the GEMM's result, or in another GEMM's template, have no setting: a reduction or a
  second GEMM ends the epilogue (the result crosses memory once either way), and nothing runs for them. A
  candidate's run that computes an op there (eager's residual add inside a compiled LayerNorm) has taken it out
  of a kernel of its own as well.
  ``to_run``: the candidate modes the run lacks, most valuable first (the unfused epilogues' share of the time they
  serve), each once however many groups it serves.
- ``advise(result, plan)``: each candidate read from its mode's result, what counts being the ops its run shows
  fused, with the whole model's latency ratio against the mode it improves, its compile time and numerics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from kernelscope.analysis.autotune import MARGINAL
from kernelscope.analysis.stats import latency_ratio
from kernelscope.mode_names import compile_options, mode_name, split_options
from kernelscope.result import (
    Advice,
    AdviceCandidate,
    AdviceSetting,
    AdviceVerdict,
    GemmEpilogue,
    GemmGroup,
    ModeResult,
    Note,
    RunEnvironment,
    RunResult,
    Status,
    WhyNot,
)
from kernelscope.result import EvidenceRule as Rule
from kernelscope.result import WhyNotReason as Reason

EAGER = "eager"
# result.settings: the modes --advise added to the run (check leaves them out of its default modes)
ADVICE_MODES = "advice_modes"
# the modes advised: a reduce-overhead or dynamic mode's candidates would need CUDA graphs or dynamic shapes too
ADVISED_BASES = ("eager", "default", "max-autotune")
_EAGER = frozenset({Reason.EAGER_CPU.value, Reason.EAGER_LIBRARY.value})
_LIBRARY = frozenset({Reason.MAX_AUTOTUNE_OFF.value, Reason.MAX_AUTOTUNE_UNKNOWN.value,
                      Reason.NO_FUSIBLE_BACKEND.value})
_WITHOUT_LIBRARY = frozenset({Reason.LIBRARY_GEMM.value, Reason.AUTOTUNE_RANKED_TEMPLATE.value})
_NO_EPILOGUE_TEMPLATE = {Reason.NVGEMM_NO_EPILOGUE_OPERATOR.value: "NVGEMM", Reason.NVGEMM_NO_EPILOGUE.value: "NVGEMM",
                         Reason.CUTLASS_NO_EPILOGUE.value: "CUTLASS"}
_BENCHMARK = frozenset({Reason.FUSION_BENCHMARK_REJECTED.value, Reason.FUSION_BENCHMARK_NO_CONFIG.value,
                        Reason.FUSION_BENCHMARK_MARGINAL.value})
_BOUNDARY_KERNEL = (Rule.DATAFLOW_STATISTICS.value, Rule.DATAFLOW_REDUCTION.value, Rule.DATAFLOW_POOLING.value)
_NEXT_GEMM = (Rule.DATAFLOW_IN_NEXT_TEMPLATE.value, Rule.DATAFLOW_IN_NEXT_PROLOGUE.value)
# CUTLASS's C++ GEMM takes an epilogue only with its EVT fusion on (vocab.FACTS "cutlass-cpp-no-evt")
_CUTLASS_EVT = {"cuda.cutlass_epilogue_fusion_enabled": True}


@dataclasses.dataclass(frozen=True, slots=True)
class AdvicePlan:
    """The advice before any candidate ran (every candidate ``not-run``; a ``why`` on one that will not run), and
    the candidate modes to run, most valuable first."""

    entries: tuple[Advice, ...]
    to_run: tuple[str, ...]


# ---------------------------------------------------------------------------------------------- what a group holds
def _held(g: GemmEpilogue) -> dict[str, tuple[str, str, str]]:
    """Unfused ops no setting moves into this GEMM: op -> ("reduction" | "next-gemm", the kernel it runs in, the
    evidence rule or why-not reason that says so). Inductor computes an op that feeds a reduction inside the
    reduction's kernel, which reads the GEMM's result anyway; an op in another GEMM's template (a prologue, or the
    second GEMM of SwiGLU's product) is that GEMM's."""
    boundary = {str(e.facts["kernel"]): e.rule for e in g.evidence
                if e.rule in _BOUNDARY_KERNEL and "kernel" in e.facts}
    held: dict[str, tuple[str, str, str]] = {}
    for e in g.evidence:
        op, f = str(e.facts.get("op", "")), e.facts
        if e.rule == Rule.DATAFLOW_SEPARATE_KERNEL.value and str(f.get("kernel")) in boundary:
            held[op] = ("reduction", str(f["kernel"]), boundary[str(f["kernel"])])
        elif e.rule == Rule.DATAFLOW_NORM_FEEDER.value:
            held[op] = ("reduction", str(f.get("norm_kernel") or f.get("kernel", "")), e.rule)
        elif e.rule == Rule.EAGER_SEQUENCE_NORM_FEEDER.value:
            held[op] = ("reduction", str(f.get("reduction", "")), e.rule)
        elif e.rule in _NEXT_GEMM:
            held[op] = ("next-gemm", str(f.get("kernel", "")), e.rule)
    for w in g.why_not:
        if w.reason == Reason.IN_NEXT_GEMM.value:
            kernels = w.facts.get("kernels")
            kernel = str(kernels[0]) if isinstance(kernels, tuple) and kernels else ""
            for op in _strs(w.facts.get("ops")):
                held.setdefault(op, ("next-gemm", kernel, w.reason))
    return {op: where for op, where in held.items() if op in g.unfused}


def _strs(v: object) -> list[str]:
    return [str(x) for x in v] if isinstance(v, tuple) else []


def _separate(members: Sequence[GemmEpilogue]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(fused in every member, left in kernels of their own in any, computed in any inside a kernel that reads the
    GEMM's result anyway: another GEMM's template, or the reduction that ends the epilogue)."""
    fused = [op for op in members[0].fused if all(op in g.fused for g in members)] if members else []
    unfused: dict[str, None] = {}
    elsewhere: dict[str, None] = {}
    for g in members:
        held = _held(g)
        for op in g.unfused:
            (elsewhere if op in held else unfused)[op] = None
    return tuple(fused), tuple(unfused), tuple(op for op in elsewhere if op not in unfused)


def _cost(members: Sequence[GemmEpilogue]) -> float:
    """The unfused ops' kernel time per iteration, each kernel of each GEMM once."""
    return sum(sum({c.kernels: c.time_us_per_iter for c in g.costs}.values()) for g in members)


def matching(members: Sequence[GemmEpilogue], other: ModeResult) -> list[GemmEpilogue]:
    """The GEMMs of another mode that are these: the same module paths, else (no module known) the same shapes."""
    modules = {g.module for g in members if g.module}
    if modules:
        return [g for g in other.gemms if g.module in modules]
    shapes = {(g.m, g.n, g.k, g.batch) for g in members}
    return [g for g in other.gemms if (g.m, g.n, g.k, g.batch) in shapes]


# ---------------------------------------------------------------------------------------------- the candidates
@dataclasses.dataclass(frozen=True, slots=True)
class _Context:
    """What a mode's candidates are made of: its name's parts, device, freezing, and the backends here."""

    mode: ModeResult
    base: str
    pinned: tuple[str, ...] | None
    options: dict[str, bool | int | str]
    device: str
    freezing: bool
    available: Mapping[str, bool]  # backend -> available here (empty: not recorded)
    sm: int | None

    @staticmethod
    def of(m: ModeResult, env: RunEnvironment, device: str, run_freezing: bool) -> _Context:
        """``run_freezing``: what the run's compiled modes froze by (eager's own config has no freezing)."""
        head, options = split_options(m.name)
        base, _, pinned = head.partition(":")
        cfg = m.config
        major = (env.capability or "").partition(".")[0]
        compiled = bool(cfg and cfg.compiled)
        return _Context(m, base, tuple(pinned.split("+")) if pinned else None, options,
                        (cfg.device if cfg and cfg.device else device) or "cpu",
                        bool(cfg and cfg.freezing) if compiled else run_freezing,
                        {k: v.available for k, v in env.gemm_backends.items()},
                        int(major) if major.isdigit() else None)

    def usable(self, backend: str) -> bool:
        return self.available.get(backend, backend in ("TRITON", "CPP") and not self.available)

    def candidate(self, setting: AdviceSetting, base: str, backends: Sequence[str] | None,
                  options: Mapping[str, bool | int | str], why: Note | None = None) -> AdviceCandidate:
        opts = dict(options)
        if self.device == "cpu" and base == "max-autotune" and not self.freezing:
            opts["freezing"] = True  # the C++ GEMM template needs constant weights (vocab "cpp-template-freezing")
        freezing = bool(opts.get("freezing", self.freezing))
        return AdviceCandidate(setting.value, compile_options(base, backends, opts, freezing),
                               mode_name(base, backends, opts), why=why)

    def templates(self, skip: str = "") -> list[AdviceCandidate]:
        """max-autotune with each GEMM template backend here that takes epilogues (not ``skip``)."""
        if self.device == "cpu":
            return [self.candidate(AdviceSetting.TEMPLATE, "max-autotune", ("CPP",), {})] if self.usable("CPP") else []
        out = []
        if self.usable("TRITON") and skip != "TRITON":
            out.append(self.candidate(AdviceSetting.TEMPLATE, "max-autotune", ("TRITON",), {}))
        if self.usable("CUTLASS"):
            out.append(self.candidate(AdviceSetting.TEMPLATE, "max-autotune", ("CUTLASS",), _CUTLASS_EVT))
        if self.usable("NVGEMM") and skip != "NVGEMM":
            why = Note("no-epilogue-operator", {"backend": "NVGEMM", "sm": f"sm{self.sm}0"}) if (
                self.sm is not None and self.sm < 10) else None
            out.append(self.candidate(AdviceSetting.TEMPLATE, "max-autotune", ("NVGEMM",), {}, why))
        return out

    def without_library(self) -> list[AdviceCandidate]:
        backends = tuple(b for b in (self.mode.config.gemm_backends or () if self.mode.config else ()) if b != "ATEN")
        if not backends:
            return self.templates()
        return [self.candidate(AdviceSetting.WITHOUT_LIBRARY, "max-autotune", backends, self.options)]

    def no_benchmark(self) -> AdviceCandidate:
        return self.candidate(AdviceSetting.NO_FUSION_BENCHMARK, self.base, self.pinned,
                              {**self.options, "benchmark_epilogue_fusion": False})


def _autotune_picked(ctx: _Context, w: WhyNot, members: Sequence[GemmEpilogue]) -> list[AdviceCandidate]:
    """Autotune picked the library: without it, unless the template lost by more than the epilogue costs (a fused
    template cannot win that back; the candidate is listed, not run)."""
    f = w.facts
    winner, template = f.get("winner_ms"), f.get("template_ms")
    if not isinstance(winner, (int, float)) or not isinstance(template, (int, float)):
        return []  # no template offered: nothing to run without the library
    margin = f.get("margin")
    loss_us = (template - winner) * 1000.0
    gain_us = _cost(members[:1])
    cands = ctx.without_library()
    if isinstance(margin, (int, float)) and margin > MARGINAL and loss_us > gain_us:
        why = Note("template-lost-more", {"winner": f.get("winner"), "template": f.get("template"),
                                          "margin": margin, "loss_us": round(loss_us, 3), "gain_us": round(gain_us, 3)})
        cands = [dataclasses.replace(c, why=why) for c in cands]
    return cands


def _compiled_fusing(ctx: _Context, members: Sequence[GemmEpilogue], modes: Sequence[ModeResult],
                     separate: int) -> list[AdviceCandidate]:
    """Eager's group: the compiled modes of the run that leave fewer of its ops in kernels of their own."""
    out = []
    for c in modes:
        if c.name == EAGER or c.status != Status.OK.value or not (c.config and c.config.compiled):
            continue
        found = matching(members, c)
        if found and len(_separate(found)[1]) < separate:
            cfg = c.config
            head, opts = split_options(c.name)
            base, _, pinned = head.partition(":")
            out.append(AdviceCandidate(AdviceSetting.COMPILED.value, compile_options(
                base, tuple(pinned.split("+")) if pinned else None, opts, bool(cfg.freezing)), c.name))
    return out


def _candidates(ctx: _Context, members: Sequence[GemmEpilogue], modes: Sequence[ModeResult],
                separate: int) -> tuple[str, list[AdviceCandidate], Note | None]:
    """(cause, candidates, why none) from the representative GEMM's why-not: the first reason a setting answers."""
    why = members[0].why_not
    for w in why:
        r = w.reason
        if r in _EAGER:
            return r, _compiled_fusing(ctx, members, modes, separate) or ctx.templates(), None
        if r in _LIBRARY:
            return r, ctx.templates(), None
        if r in _WITHOUT_LIBRARY:
            return r, ctx.without_library(), None
        if r == Reason.AUTOTUNE_PICKED.value:
            cands = _autotune_picked(ctx, w, members)
            return r, cands, None if cands else Note("no-template-choice", {"winner": w.facts.get("winner")})
        if r in _NO_EPILOGUE_TEMPLATE:
            return r, ctx.templates(skip=_NO_EPILOGUE_TEMPLATE[r]), None
        if r in _BENCHMARK:
            return r, [ctx.no_benchmark()], None
    reasons = [w.reason for w in why]
    cause = reasons[0] if reasons else ""
    code = "why-not-from-an-older-result" if cause == Reason.LEGACY.value else "no-known-setting"
    return cause, [], Note(code, {"reasons": reasons})


def _no_setting(held: Mapping[str, tuple[str, str, str]]) -> tuple[str, Note]:
    """What ends the epilogue of a group all of whose unfused ops are held elsewhere: (cause, why no setting)."""
    kinds = {kind for kind, _, _ in held.values()}
    ops = list(held)
    kernels = list(dict.fromkeys(k for _, k, _ in held.values() if k))
    cause = next(iter(held.values()))[2]
    if kinds == {"next-gemm"}:
        return cause, Note("ends-in-next-gemm", {"ops": ops, "kernels": kernels})
    return cause, Note("ends-in-reduction", {"ops": ops, "kernels": kernels})


def _entry(m: ModeResult, grp: GemmGroup, modes: Sequence[ModeResult], env: RunEnvironment, device: str,
           run_freezing: bool) -> Advice | None:
    by_id = {g.id: g for g in m.gemms}
    members = [by_id[i] for i in grp.members if i in by_id]
    if not grp.unfused or not members:
        return None
    held = _held(members[0])
    fusible = [op for op in grp.unfused if op not in held]
    cost = _cost(members)
    share = round(100.0 * cost / m.gpu_time_us_per_iter, 2) if m.gpu_time_us_per_iter else None
    if not fusible:
        cause, note = _no_setting(held)
        return Advice(grp.label, m.name, grp.unfused, cause, no_setting=note, cost_us=round(cost, 3),
                      share_pct=share)
    ctx = _Context.of(m, env, device, run_freezing)
    cause, cands, none = _candidates(ctx, members, modes, len(fusible))
    cands = [c for c in dict((c.mode_name, c) for c in cands).values() if c.mode_name != m.name]
    return Advice(grp.label, m.name, grp.unfused, cause, tuple(cands),
                  no_setting=None if cands else (none or Note("no-known-setting", {"reasons": [cause]})),
                  cost_us=round(cost, 3), share_pct=share)


def plan_advice(modes: Sequence[ModeResult], environment: RunEnvironment, device: str = "",
                skip: Iterable[str] = ()) -> AdvicePlan:
    """The advice for every mode that ran (``skip``: modes that are themselves candidates), and the candidate modes
    to run: those the run lacks, to run, ranked by the share of the time of the unfused epilogues they serve."""
    skip = set(skip)
    # kernelscope freezes compiled modes on the CPU unless --no-freezing: what the run's compiled modes did
    froze = [m.config.freezing for m in modes if m.config and m.config.compiled and m.config.freezing is not None]
    run_freezing = froze[0] if froze else (device or environment.device) == "cpu"
    advised = [m for m in modes if m.status == Status.OK.value and m.name not in skip
               and split_options(m.name)[0].partition(":")[0] in ADVISED_BASES]
    entries = [e for m in advised for grp in m.gemm_groups
               if (e := _entry(m, grp, modes, environment, device, run_freezing)) is not None]
    have = {m.name for m in modes}
    value: dict[str, tuple[float, float]] = {}  # mode -> (share of the time, µs) of the epilogues it serves
    for e in entries:
        for c in e.candidates:
            if c.why is None and c.mode_name not in have:
                share, cost = value.get(c.mode_name, (0.0, 0.0))
                value[c.mode_name] = (share + (e.share_pct or 0.0), cost + (e.cost_us or 0.0))
    ranked = sorted(value, key=lambda name: (-value[name][0], -value[name][1]))
    return AdvicePlan(tuple(entries), tuple(ranked))


# ---------------------------------------------------------------------------------------------- what the runs show
def _verdict(base: ModeResult, cand: ModeResult, separate: int, shown: tuple[tuple[str, ...], ...],
             between_runs: bool) -> dict[str, object]:
    fused, unfused, elsewhere = shown
    out: dict[str, object] = {"fused": fused, "unfused": unfused, "elsewhere": elsewhere,
                              "between_runs": between_runs}
    nv = cand.numerics_verdict
    out["numerics_pass"] = None if nv is None or nv.status not in ("pass", "fail") else nv.status == "pass"
    out["compile_s"] = cand.compile.cold_s if cand.compile and cand.compile.cold_s is not None else cand.first_call_s
    r = latency_ratio(cand.latency_ms, base.latency_ms, between_runs=between_runs).inverted()
    out.update(latency_ratio=r.value, low=r.low, high=r.high)
    if len(unfused) >= separate:
        verdict = AdviceVerdict.NOT_FUSED
    elif out["numerics_pass"] is False:
        verdict = AdviceVerdict.NUMERICS_FAIL
    elif r.value is None:
        verdict = AdviceVerdict.NO_LATENCY
    elif r.low is not None and r.low > 1.0:
        verdict = AdviceVerdict.FASTER
    elif r.high is not None and r.high < 1.0:
        verdict = AdviceVerdict.SLOWER
    else:
        verdict = AdviceVerdict.WITHIN_NOISE
    out["verdict"] = verdict.value
    return out


def _read(c: AdviceCandidate, base: ModeResult, members: Sequence[GemmEpilogue], separate: int,
          result: RunResult, not_run: Mapping[str, Note], between_runs: frozenset[str]) -> AdviceCandidate:
    cand = result.mode(c.mode_name)
    if c.why is not None and cand is None:
        return c
    if cand is None:
        return dataclasses.replace(c, why=not_run.get(c.mode_name, Note("candidate-not-run", {})))
    if cand.status != Status.OK.value:
        lines = (cand.error or "").strip().splitlines()
        return dataclasses.replace(c, verdict=AdviceVerdict.FAILED.value, why=Note(
            "candidate-failed", {"status": cand.status, "error": lines[-1] if lines else ""}))
    found = matching(members, cand)
    backend = ", ".join(dict.fromkeys(g.backend for g in found))
    shown = _separate(found) if found else ((), (), ())
    fields = _verdict(base, cand, separate if found else 0, shown, c.mode_name in between_runs)
    return dataclasses.replace(c, backend=backend, why=None, **fields)  # type: ignore[arg-type]


def advise(result: RunResult, plan: AdvicePlan, not_run: Mapping[str, Note] | None = None,
           between_runs: Iterable[str] = ()) -> tuple[Advice, ...]:
    """The plan's advice with every candidate read from its mode in ``result`` (``not_run``: why a candidate mode
    did not run; ``between_runs``: candidate modes run after the result's own modes, not interleaved with them)."""
    later = frozenset(between_runs)
    out = []
    for e in plan.entries:
        base = result.mode(e.mode)
        if base is None or not e.candidates:
            out.append(e)
            continue
        grp = next((g for g in base.gemm_groups if g.label == e.group), None)
        by_id = {g.id: g for g in base.gemms}
        members = [by_id[i] for i in (grp.members if grp else ()) if i in by_id]
        separate = len(_separate(members)[1]) if members else len(e.unfused)
        cands = tuple(_read(c, base, members, separate, result, not_run or {}, later) for c in e.candidates)
        faster = [c for c in cands if c.verdict == AdviceVerdict.FASTER.value and c.numerics_pass is True]
        best = max(faster, key=lambda c: c.latency_ratio or 0.0).mode_name if faster else None
        out.append(dataclasses.replace(e, candidates=cands, best=best))
    return tuple(out)
