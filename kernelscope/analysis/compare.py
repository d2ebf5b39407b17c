"""Two runs compared (base -> head): whether they are comparable, per mode the latency change with a noise-aware
call, kernel counts, GEMM verdicts paired across the runs, failures, and each rank of a torchrun run.

``compare_results`` builds a ``Comparison`` (plain frozen data, what the tests assert on); report/compare.py only
prints it (compare.html, compare.md, compare.json), and says its Notes in words (report/words.py).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.analysis.autotune import autotune_for_gemm, decision_notes
from kernelscope.analysis.contention import busy_host_sides, contended_sides
from kernelscope.analysis.pairing import change_kind, match_gemms
from kernelscope.analysis.ranks import RankDelta, compare_ranks
from kernelscope.analysis.stats import Ratio, latency_ratio, median_interval, separated
from kernelscope.result import GemmEpilogue, LatencyStats, ModeResult, Note, RunEnvironment, RunResult, Status


@dataclass(frozen=True, slots=True)
class CountDelta:
    key: str  # a category or a backend
    base: float
    head: float

    @property
    def delta(self) -> float:
        return self.head - self.base


@dataclass(frozen=True, slots=True)
class GemmChange:
    """One GEMM matched across the runs by (op, M, N, K, occurrence), or present in one run only."""

    key: str
    base: GemmEpilogue | None
    head: GemmEpilogue | None
    gained: tuple[str, ...]  # epilogue ops fused in head that were not fused in base
    lost: tuple[str, ...]  # ops fused in base that are not fused in head
    backend_switched: bool
    # Either run's compile-time benchmark that decided this GEMM was close (an autotune winner within noise of
    # another kind, an epilogue-fusion benchmark within its spread): a change is then a coin that landed the other
    # way, not a regression.
    marginal_autotune: bool = False
    label: str = ""  # how the report names it: the module path, else "op M × N × K"
    shapes: str = ""  # its shape, or "8192 × 512 × 512 → 1024 × 512 × 512" when a shape parameter changed
    # What decided the change when it is not the code's: "marginal autotune", "marginal fusion benchmark", or
    # "compile-time choice" (both runs compiled the same model file with the same versions and settings, so only
    # Inductor's benchmarks at compile time can have changed it); "" otherwise.
    choice: str = ""

    @property
    def kind(self) -> str:
        base = self._kind
        if base in ("same", "new GEMM", "GEMM gone"):
            return base
        if self.choice:
            return f"{base} ({self.choice}: may differ between runs)"
        if self.marginal_autotune:
            return f"{base} (marginal autotune: may differ between runs)"
        return base

    @property
    def _kind(self) -> str:
        return change_kind(self.base, self.head, self.gained, self.lost, self.backend_switched)


@dataclass(frozen=True, slots=True)
class ModeDelta:
    name: str
    base: ModeResult | None
    head: ModeResult | None
    latency: Ratio  # head median / base median
    call: str  # "faster" | "slower" | "within noise" | "n/a"
    categories: tuple[CountDelta, ...]
    backends: tuple[CountDelta, ...]
    gemms: tuple[GemmChange, ...]
    change: str = "none"  # "none" | "faster" | "slower": both runs' intervals separate
    pad_note: Note | None = None  # kernels that differ are pad kernels: Inductor's pad_mm decision, benchmarked
    # Both runs compiled the same model file with the same versions and settings, yet launched different kernels:
    # Inductor's compile-time benchmarks chose differently, so the latency change is the compiles', not the code's.
    compile_note: Note | None = None
    ranks: tuple[RankDelta, ...] = ()  # per rank, matched by index (torchrun runs)
    contended: tuple[str, ...] = ()  # "base" / "head": that run timed this mode on a busy machine (contention.py)
    # "base" / "head": that run timed this mode on a busy host (hypervisor steal) where the other run's host was
    # quiet (contention.py busy_host_sides); empty when both hosts were alike or either was not measured
    busy_host: tuple[str, ...] = ()
    # The 95% interval of each run's median (low, high, method): the one its result recorded, or one computed from
    # what an older result kept (analysis/stats.py median_interval).
    base_interval: tuple[float | None, float | None, str] = (None, None, "")
    head_interval: tuple[float | None, float | None, str] = (None, None, "")

    @property
    def status_change(self) -> str:
        """"new failure", "fixed", "only in base", "only in head", "still failing", "still unavailable" or ""."""
        if self.base is None:
            return "only in head" + (" (failed)" if not _ok(self.head) else "")
        if self.head is None:
            return "only in base"
        if _ok(self.base) and not _ok(self.head):
            return "new failure"
        if not _ok(self.base) and _ok(self.head):
            return "fixed"
        if not _ok(self.base) and not _ok(self.head):
            unavailable = Status.UNAVAILABLE.value
            return "still unavailable" if self.base.status == self.head.status == unavailable else "still failing"
        return ""

    @property
    def kernels_delta(self) -> CountDelta | None:
        if self.base is None or self.head is None:
            return None
        if self.base.kernels_per_iter is None or self.head.kernels_per_iter is None:
            return None
        return CountDelta("kernels", self.base.kernels_per_iter, self.head.kernels_per_iter)

    @property
    def changed_gemms(self) -> tuple[GemmChange, ...]:
        return tuple(g for g in self.gemms if g.kind != "same")


@dataclass(frozen=True, slots=True)
class Comparable:
    """Whether two runs measured the same thing on the same kind of machine, said first in every compare output.

    ``fields``: (name, base, head) for device name, device, dtype, model file hash, shape parameters, inputs,
    torch / triton versions, modes and timing settings. A different device name or dtype makes the runs not
    comparable (``compare`` refuses unless --force, and then every row is marked); a different torch or triton
    version is the upgrade case, shown and not refused."""

    ok: bool
    forced: bool
    fields: tuple[tuple[str, str, str], ...]
    differences: tuple[tuple[str, str, str], ...]  # (name, base, head) of each field that differs
    refused: tuple[tuple[str, str, str], ...]  # the differences that make the runs not comparable
    warnings: tuple[Note, ...] = ()  # e.g. a run timed in one process: its interval misses between-process noise


@dataclass(frozen=True, slots=True)
class Comparison:
    base: RunResult
    head: RunResult
    base_label: str
    head_label: str
    modes: tuple[ModeDelta, ...]
    environment: tuple[tuple[str, str, str], ...]  # (key, base value, head value) where they differ
    comparable: Comparable

    @property
    def new_failures(self) -> tuple[ModeDelta, ...]:
        return tuple(m for m in self.modes if m.status_change in ("new failure", "only in head (failed)"))

    @property
    def fixed(self) -> tuple[ModeDelta, ...]:
        return tuple(m for m in self.modes if m.status_change == "fixed")


# Differences that refuse a comparison (exit 2 without --force): timings from different hardware or dtypes
# say nothing about a change in the code.
REFUSE = ("device name", "device", "dtype")
SETTINGS = ("warmup", "repeats", "processes", "profile_steps", "freezing", "gemm_backends", "reference", "timeout_s",
            "cpu_pinning")


def _device_name(r: RunResult) -> str:
    return r.environment.gpu or r.environment.cpu or fmt.DASH


def _text(v: object) -> str:
    if v is None or v == "" or v == {}:
        return fmt.DASH
    if isinstance(v, dict):
        return ", ".join(f"{k}={v[k]}" for k in sorted(v))
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


def comparable_runs(base: RunResult, head: RunResult, *, force: bool = False) -> Comparable:
    def shape(r: RunResult) -> str:
        st = r.settings or {}
        parts = [_text(st.get("sets"))]
        if st.get("sweep"):
            parts.append("sweep " + _text(st.get("sweep")))
        return "; ".join(p for p in parts if p != fmt.DASH) or fmt.DASH

    def row(name: str, get: Callable[[RunResult], str]) -> tuple[str, str, str]:
        return (name, get(base), get(head))

    def setting(key: str) -> Callable[[RunResult], str]:
        return lambda r: _text((r.settings or {}).get(key))

    fields = [
        row("device name", _device_name),
        row("device", lambda r: _text(r.device or r.environment.device)),
        row("dtype", lambda r: _text(r.dtype)),
        row("model file", lambda r: _text(r.model.replace("\\", "/").rsplit("/", 1)[-1] if r.model else "")),
        row("model file sha256", lambda r: _text((r.settings or {}).get("model_sha256") or "not recorded")),
        row("shape parameters", shape),
        row("inputs", lambda r: _text((r.settings or {}).get("inputs"))),
        row("torch", lambda r: _text(r.environment.torch)),
        row("triton", lambda r: _text(r.environment.triton)),
        row("modes", lambda r: _text((r.settings or {}).get("modes") or [m.name for m in r.modes])),
    ]
    fields += [row(f"setting {k}", setting(k)) for k in SETTINGS]
    diffs = tuple((n, b, h) for n, b, h in fields if b != h)
    refused = tuple((n, b, h) for n, b, h in fields if b != h and n in REFUSE)
    single = [label for label, r in (("base", base), ("head", head))
              if any(m.latency_ms is not None and (m.latency_ms.processes or 1) < 2 for m in r.modes)]
    warnings = (Note("timed-in-one-process", {"sides": single}),) if single else ()
    return Comparable(not refused, force, tuple(fields), diffs, refused, warnings)


def environment_changes(base: RunEnvironment, head: RunEnvironment) -> tuple[tuple[str, str, str], ...]:
    """(key, base value, head value) for every environment key whose value differs, keys as the report rows
    spell them ("gpu", "interpreter / torch")."""
    env_b = {kv.key: kv.value for kv in fmt.environment_rows(base)}
    env_h = {kv.key: kv.value for kv in fmt.environment_rows(head)}
    return tuple((k, env_b.get(k, fmt.DASH), env_h.get(k, fmt.DASH)) for k in dict.fromkeys([*env_b, *env_h])
                 if env_b.get(k) != env_h.get(k))


def _marginal(m: ModeResult | None) -> dict[str, str]:
    """GEMM id -> "marginal autotune" / "marginal fusion benchmark" for the GEMMs of a mode whose deciding
    compile-time benchmark was close (analysis/autotune.py ``decision_notes``)."""
    out: dict[str, str] = {}
    for g in (m.gemms if m else ()):
        notes = decision_notes(g, autotune_for_gemm(m.autotune, g.id)) if m else ()
        if notes:
            out[g.id] = "marginal autotune" if notes[0].code == "autotune-marginal" else "marginal fusion benchmark"
    return out


def same_build(c: Comparable) -> bool:
    """Both runs compiled the same model file (its hash recorded and equal) with the same versions, shapes and
    settings on the same kind of device: anything that differs in what they launched was chosen at compile time."""
    sha = dict((n, b) for n, b, _ in c.fields).get("model file sha256")
    return c.ok and not c.differences and sha not in (None, fmt.DASH, "not recorded")


def _compile_note(mb: ModeResult | None, mh: ModeResult | None, gemms: tuple[GemmChange, ...]) -> Note | None:
    """For a same-build pair: the kernels one run launched and the other did not (how many, the first three by
    name), and how many GEMM verdicts or backends changed, as Inductor's compile-time choices."""
    if not _ok(mb) or not _ok(mh):
        return None
    assert mb is not None and mh is not None
    kb, kh = {k.name for k in mb.kernels}, {k.name for k in mh.kernels}
    changed = [g for g in gemms if g.kind != "same"]
    if kb == kh and not changed:
        return None
    return Note("compiled-differently", {"kernels": len(kb ^ kh), "first": sorted(kb ^ kh)[:3],
                                         "gemms": len(changed)})


def _pad_note(mb: ModeResult | None, mh: ModeResult | None) -> Note | None:
    """Kernels that appear in one run only, all of them pad kernels: Inductor's pad_mm benchmarked at compile
    time whether padding a GEMM pays, and decided differently (a ViT's default graph gained six in one of two
    runs)."""
    if not mb or not mh:
        return None
    kb, kh = {k.name for k in mb.kernels}, {k.name for k in mh.kernels}
    diff = kb ^ kh
    if diff and all("pad" in n.lower() for n in diff):
        return Note("pad-kernels-differ", {"kernels": len(diff), "first": sorted(diff)[:3]})
    return None


def _ok(m: ModeResult | None) -> bool:
    return m is not None and m.status == Status.OK.value


def ok_latency(m: ModeResult | None) -> LatencyStats | None:
    """The mode's steady latency when it ran ok, else None (a side that did not run it, or failed)."""
    return m.latency_ms if m is not None and _ok(m) else None


def _counts(base: dict[str, float], head: dict[str, float]) -> tuple[CountDelta, ...]:
    keys = list(dict.fromkeys([*base, *head]))
    return tuple(CountDelta(k, base.get(k, 0.0), head.get(k, 0.0)) for k in keys)


def compare_gemms(base: tuple[GemmEpilogue, ...], head: tuple[GemmEpilogue, ...], *, same: bool = False,
                  base_marginal: dict[str, str] | None = None,
                  head_marginal: dict[str, str] | None = None) -> tuple[GemmChange, ...]:
    """The two runs' GEMMs paired as ``pairing.match_gemms`` pairs them (module and shape, op and shape, shape,
    then, when a shape parameter changed, the module or the nth GEMM of an op both runs launch equally often).
    ``base_marginal`` / ``head_marginal``: each run's GEMM ids whose deciding benchmark was close, and which
    ("marginal autotune", "marginal fusion benchmark"); ``same``: both runs are one build (``same_build``), so any
    change is a compile-time choice."""
    bm, hm = base_marginal or {}, head_marginal or {}
    out = []
    seen: dict[str, int] = defaultdict(int)
    for row in match_gemms(base, head):
        gb, gh = row.before, row.after
        one = gb or gh
        assert one is not None
        shape = fmt.shape(one.m, one.n, one.k, one.batch)
        label = row.label if one.module else f"{one.op or 'gemm'} {shape}"
        shapes = shape
        if gb is not None and gh is not None and row.matched_by.endswith("new shape"):
            shapes = f"{fmt.shape(gb.m, gb.n, gb.k, gb.batch)} → {fmt.shape(gh.m, gh.n, gh.k, gh.batch)}"
        key = f"{label}: {shapes}" if one.module or shapes != shape else label
        seen[key] += 1
        if seen[key] > 1:
            key = f"{key} #{seen[key]}"
        if gb is None or gh is None:
            out.append(GemmChange(key, gb, gh, (), (), False, label=label, shapes=shapes))
            continue
        gained = tuple(op for op in gh.fused if op not in gb.fused)
        lost = tuple(op for op in gb.fused if op not in gh.fused)
        choice = bm.get(gb.id) or hm.get(gh.id) or ("compile-time choice" if same else "")
        out.append(GemmChange(key, gb, gh, gained, lost, gb.backend != gh.backend,
                              bm.get(gb.id) == "marginal autotune" or hm.get(gh.id) == "marginal autotune",
                              label=label, shapes=shapes, choice=choice))
    return tuple(out)


def _call(change: str, r: Ratio) -> str:
    if r.value is None:
        return "n/a"
    return change if change != "none" else "within noise"


def compare_results(base: RunResult, head: RunResult, base_label: str = "base", head_label: str = "head", *,
                    force: bool = False) -> Comparison:
    names = list(dict.fromkeys([m.name for m in base.modes] + [m.name for m in head.modes]))
    comparable = comparable_runs(base, head, force=force)
    same = same_build(comparable)
    modes = []
    for name in names:
        mb, mh = base.mode(name), head.mode(name)
        lb, lh = ok_latency(mb), ok_latency(mh)
        r = latency_ratio(lh, lb, between_runs=True)
        # Beyond noise only when both runs' intervals (across processes) separate.
        change = separated(lb, lh) if r.value is not None else "none"
        gemms = compare_gemms(mb.gemms, mh.gemms, same=same, base_marginal=_marginal(mb),
                              head_marginal=_marginal(mh)) if mb and mh else ()
        pad = _pad_note(mb, mh)
        modes.append(ModeDelta(
            name=name, base=mb, head=mh, latency=r, call=_call(change, r),
            categories=_counts(mb.kernels_by_category if mb else {}, mh.kernels_by_category if mh else {}),
            backends=_counts(mb.kernels_by_backend if mb else {}, mh.kernels_by_backend if mh else {}),
            # GEMMs of a mode that ran in one run only are not "gained" or "lost": the mode itself is.
            gemms=gemms,
            change=change, pad_note=pad, ranks=compare_ranks(mb, mh),
            compile_note=_compile_note(mb, mh, gemms) if same and not pad else None,
            contended=contended_sides((("base", lb), ("head", lh))),
            busy_host=busy_host_sides((("base", lb), ("head", lh))),
            base_interval=median_interval(mb.latency_ms if mb else None),
            head_interval=median_interval(mh.latency_ms if mh else None),
        ))
    env = environment_changes(base.environment, head.environment)
    # [side, mode] for each mode a side timed on a busy machine, and on a busy host where the other's was quiet
    busy = [[side, m.name] for m in modes for side in m.contended]
    if busy:
        comparable = dataclasses.replace(comparable, warnings=(
            *comparable.warnings, Note("busy-machine-sides", {"timings": busy})))
    hosts = [[side, m.name] for side in ("base", "head") for m in modes if side in m.busy_host]
    if hosts:
        comparable = dataclasses.replace(comparable, warnings=(
            *comparable.warnings, Note("busy-host-sides", {"timings": hosts})))
    return Comparison(base, head, base_label, head_label, tuple(modes), env, comparable)

