"""Compare two runs (base -> head): latency with a noise-aware call, kernel counts, GEMM verdicts, failures.

``compare_results`` builds a ``Comparison`` (plain frozen data, what the tests assert on);
``render_compare_html`` and ``render_compare_markdown`` only print it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.analysis.ranks import compare_ranks
from kernelscope.analysis.stats import Ratio, latency_ratio, median_interval, separated
from kernelscope.report import charts
from kernelscope.report.context import flatten
from kernelscope.report.html import environment, page_assets
from kernelscope.report.markdown import MAX_CHARS, md_code, md_text
from kernelscope.report.ranks import compare_markdown as rank_compare_markdown
from kernelscope.report.ranks import rank_delta_json
from kernelscope.result import GemmEpilogue, ModeResult, RunResult, Status


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
    # Either run's autotune for this GEMM was marginal (winner within noise of another kind): a change is then
    # a coin that landed the other way, not a regression.
    marginal_autotune: bool = False
    label: str = ""  # how the report names it: the module path, else "op M × N × K"
    shapes: str = ""  # its shape, or "8192 × 512 × 512 → 1024 × 512 × 512" when a shape parameter changed

    @property
    def kind(self) -> str:
        base = self._kind
        if self.marginal_autotune and base not in ("same", "new GEMM", "GEMM gone"):
            return f"{base} (marginal autotune: may differ between runs)"
        return base

    @property
    def _kind(self) -> str:
        if self.base is None:
            return "new GEMM"
        if self.head is None:
            return "GEMM gone"
        if self.gained and not self.lost:
            return "fusion gained"
        if self.lost and not self.gained:
            return "fusion lost"
        if self.gained or self.lost:
            return "fusion changed"
        if self.base.verdict != self.head.verdict:
            return "verdict changed"
        return "backend switched" if self.backend_switched else "same"


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
    change: str = "none"  # "none" | "faster" | "slower": both runs' intervals separate (issue 13)
    pad_note: str = ""  # kernels that differ are pad kernels: Inductor's pad_mm decision, benchmarked at compile
    ranks: tuple = ()  # report/ranks.py RankDelta per rank, matched by index (torchrun runs, issue 17)

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
class Comparison:
    base: RunResult
    head: RunResult
    base_label: str
    head_label: str
    modes: tuple[ModeDelta, ...]
    environment: tuple[tuple[str, str, str], ...]  # (key, base value, head value) where they differ
    comparable: Comparable | None = None

    @property
    def new_failures(self) -> tuple[ModeDelta, ...]:
        return tuple(m for m in self.modes if m.status_change in ("new failure", "only in head (failed)"))

    @property
    def fixed(self) -> tuple[ModeDelta, ...]:
        return tuple(m for m in self.modes if m.status_change == "fixed")


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
    differences: tuple[str, ...]  # "torch: 2.11.0 -> 2.14.1", one per differing field
    refused: tuple[str, ...]  # the differences that make the runs not comparable
    warnings: tuple[str, ...] = ()  # e.g. a run timed in one process: its interval misses between-process noise

    @property
    def headline(self) -> str:
        if self.ok and not self.differences:
            text = "comparable: same device, dtype, model file, shapes, versions and settings"
        elif self.ok:
            text = "comparable, with differences: " + "; ".join(self.differences)
        else:
            text = ("NOT comparable" + (" (compared anyway, --force)" if self.forced else "") + ": "
                    + "; ".join(self.refused))
        return text + "".join(f". {w}" for w in self.warnings)


# Differences that refuse a comparison (exit 2 without --force): timings from different hardware or dtypes
# say nothing about a change in the code.
REFUSE = ("device name", "device", "dtype")
SETTINGS = ("warmup", "repeats", "processes", "profile_steps", "freezing", "gemm_backends", "reference", "timeout_s")


def _device_name(r: RunResult) -> str:
    env = r.environment or {}
    return str(env.get("gpu") or env.get("cpu") or fmt.DASH)


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

    def row(name: str, get: object) -> tuple[str, str, str]:
        return (name, get(base), get(head))  # type: ignore[operator]

    fields = [
        row("device name", _device_name),
        row("device", lambda r: _text(r.device or (r.environment or {}).get("device"))),
        row("dtype", lambda r: _text(r.dtype)),
        row("model file", lambda r: _text(r.model.replace("\\", "/").rsplit("/", 1)[-1] if r.model else "")),
        row("model file sha256", lambda r: _text((r.settings or {}).get("model_sha256") or "not recorded")),
        row("shape parameters", shape),
        row("inputs", lambda r: _text((r.settings or {}).get("inputs"))),
        row("torch", lambda r: _text((r.environment or {}).get("torch"))),
        row("triton", lambda r: _text((r.environment or {}).get("triton"))),
        row("modes", lambda r: _text((r.settings or {}).get("modes") or [m.name for m in r.modes])),
    ]
    fields += [row(f"setting {k}", lambda r, k=k: _text((r.settings or {}).get(k))) for k in SETTINGS]
    diffs = tuple(f"{n}: {b} → {h}" for n, b, h in fields if b != h)
    refused = tuple(f"{n}: {b} → {h}" for n, b, h in fields if b != h and n in REFUSE)
    single = [label for label, r in (("base", base), ("head", head))
              if any(m.latency_ms is not None and (m.latency_ms.processes or 1) < 2 for m in r.modes)]
    warnings = ()
    if single:
        warnings = (f"{' and '.join(single)} timed each mode in one process: {'their' if len(single) > 1 else 'its'} "
                    "intervals cover the noise inside a process only, and separate runs differ by more (rerun "
                    "with --processes 5)",)
    return Comparable(not refused, force, tuple(fields), diffs, refused, warnings)


def _marginal(m: ModeResult | None) -> set[str]:
    return {gid for a in (m.autotune if m else ()) if a.marginal for gid in (a.gemms or ((a.gemm,) if a.gemm else ()))}


def _pad_note(mb: ModeResult | None, mh: ModeResult | None) -> str:
    """Kernels that appear in one run only, all of them pad kernels: Inductor's pad_mm benchmarked at compile
    time whether padding a GEMM pays, and decided differently (a ViT's default graph gained six in one of two
    runs)."""
    if not mb or not mh:
        return ""
    kb, kh = {k.name for k in mb.kernels}, {k.name for k in mh.kernels}
    diff = kb ^ kh
    if diff and all("pad" in n.lower() for n in diff):
        return (f"{len(diff)} pad kernel(s) differ ({', '.join(sorted(diff)[:3])}): Inductor's pad_mm decides at "
                "compile time, by benchmarking, whether to pad a GEMM; the decision may differ between runs")
    return ""


def _ok(m: ModeResult | None) -> bool:
    return m is not None and m.status == Status.OK.value


def _counts(base: dict[str, float], head: dict[str, float]) -> tuple[CountDelta, ...]:
    keys = list(dict.fromkeys([*base, *head]))
    return tuple(CountDelta(k, base.get(k, 0.0), head.get(k, 0.0)) for k in keys)


def compare_gemms(base: tuple[GemmEpilogue, ...], head: tuple[GemmEpilogue, ...],
                  marginal: set[str] | None = None) -> tuple[GemmChange, ...]:
    """The two runs' GEMMs paired as ``upgrade.match_gemms`` pairs them (module and shape, op and shape, shape,
    then, when a shape parameter changed, the module or the nth GEMM of an op both runs launch equally often).
    ``marginal``: GEMM ids (of either run) whose autotune winner was marginal."""
    from kernelscope.report.upgrade import match_gemms

    marginal = marginal or set()
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
        out.append(GemmChange(key, gb, gh, gained, lost, gb.backend != gh.backend,
                              gb.id in marginal or gh.id in marginal, label=label, shapes=shapes))
    return tuple(out)


def _call(change: str, r: Ratio) -> str:
    if r.value is None:
        return "n/a"
    return change if change != "none" else "within noise"


def compare_results(base: RunResult, head: RunResult, base_label: str = "base", head_label: str = "head", *,
                    force: bool = False) -> Comparison:
    names = list(dict.fromkeys([m.name for m in base.modes] + [m.name for m in head.modes]))
    modes = []
    for name in names:
        mb, mh = base.mode(name), head.mode(name)
        lb, lh = (mb.latency_ms if _ok(mb) else None), (mh.latency_ms if _ok(mh) else None)
        r = latency_ratio(lh, lb)
        # Beyond noise only when both runs' intervals (across processes) separate.
        change = separated(lb, lh) if r.value is not None else "none"
        modes.append(ModeDelta(
            name=name, base=mb, head=mh, latency=r, call=_call(change, r),
            categories=_counts(mb.kernels_by_category if mb else {}, mh.kernels_by_category if mh else {}),
            backends=_counts(mb.kernels_by_backend if mb else {}, mh.kernels_by_backend if mh else {}),
            # GEMMs of a mode that ran in one run only are not "gained" or "lost": the mode itself is.
            gemms=compare_gemms(mb.gemms, mh.gemms, _marginal(mb) | _marginal(mh)) if mb and mh else (),
            change=change, pad_note=_pad_note(mb, mh), ranks=compare_ranks(mb, mh),
        ))
    env_b = {kv.key: kv.value for kv in flatten(base.environment)}
    env_h = {kv.key: kv.value for kv in flatten(head.environment)}
    env = tuple((k, env_b.get(k, fmt.DASH), env_h.get(k, fmt.DASH)) for k in dict.fromkeys([*env_b, *env_h])
                if env_b.get(k) != env_h.get(k))
    return Comparison(base, head, base_label, head_label, tuple(modes), env, comparable_runs(base, head, force=force))


def _lat_json(m: ModeResult | None) -> dict | None:
    if m is None or m.latency_ms is None:
        return None
    low, high, method = median_interval(m.latency_ms)
    return {"median_ms": m.latency_ms.median, "low_ms": low, "high_ms": high, "interval": method,
            "processes": m.latency_ms.processes or 1, "per_process_ms": list(m.latency_ms.per_process)}


def compare_data(cmp: Comparison) -> dict:
    """compare.json: the comparability header first, then per mode the change and per GEMM the verdicts."""
    c = cmp.comparable or comparable_runs(cmp.base, cmp.head)
    marked = not c.ok
    return {
        "schema": "kernelscope.compare/1",
        "base": cmp.base_label,
        "head": cmp.head_label,
        "comparable": {"ok": c.ok, "forced": c.forced, "headline": c.headline,
                       "fields": [{"name": n, "base": b, "head": h, "same": b == h} for n, b, h in c.fields],
                       "differences": list(c.differences), "refused": list(c.refused)},
        "modes": [{
            "mode": m.name,
            "status_change": m.status_change,
            "change": m.change,
            "ratio": m.latency.value,
            "low": m.latency.low,
            "high": m.latency.high,
            "interval": m.latency.method,
            "base": _lat_json(m.base),
            "head": _lat_json(m.head),
            "kernels_per_iter": ({"base": m.kernels_delta.base, "head": m.kernels_delta.head}
                                 if m.kernels_delta else None),
            "gemms": [{"key": g.key, "kind": g.kind, "base": g.base.verdict if g.base else None,
                       "head": g.head.verdict if g.head else None,
                       "base_backend": g.base.backend if g.base else None,
                       "head_backend": g.head.backend if g.head else None,
                       "gained": list(g.gained), "lost": list(g.lost),
                       "marginal_autotune": g.marginal_autotune} for g in m.gemms],
            "pad_note": m.pad_note,
            "not_comparable": marked,
            **({"ranks": [rank_delta_json(d) for d in m.ranks]} if m.ranks else {}),
        } for m in cmp.modes],
    }


def ratio_chart(cmp: Comparison) -> charts.Chart:
    rows = [(m.name, m.latency.value, m.latency.low if m.latency.method == "bootstrap" else None,
             m.latency.high if m.latency.method == "bootstrap" else None, m.latency.within_noise) for m in cmp.modes]
    return charts.ratio_chart("Latency change per mode (head / base)", rows)


# ---------------------------------------------------------------------------------------------------------------
def render_compare_html(cmp: Comparison) -> str:
    template = environment().get_template("compare.html.j2")
    return template.render(cmp=cmp, chart=ratio_chart(cmp), tool_version=cmp.head.tool_version, **page_assets())


def change_text(m: ModeDelta) -> str:
    """The latency change head vs base read one way, with the call: "2.51× faster (-60.2%)",
    "1.01× slower (+1.0%), within noise"; "" without a latency on both sides."""
    r = m.latency
    if r.value is None:
        return ""
    noise = ", within noise" if m.call == "within noise" else ""
    return f"{fmt.change(r.value)} ({fmt.percent_change(r.value)}){noise}"


def _latency_cell(m: ModeDelta) -> str:
    r = m.latency
    if r.value is None:
        return fmt.DASH
    ci = (f"; 95% CI {fmt.change_interval(r.low, r.high)}"
          if r.method in ("bootstrap", "processes") and r.low and r.high else "")
    detail = f"({fmt.percent_change(r.value)}{ci})"
    if m.call == "within noise":
        return f"{fmt.change(r.value)}, **within noise** {detail}"
    return f"**{fmt.change(r.value)}** {detail}"


def _gemm_change_text(g: GemmChange, in_table: bool = False) -> str:
    if g.base is None or g.head is None:
        only = g.head or g.base
        assert only is not None
        return f"{md_text(g.kind)}: {md_text(g.key)} {md_text(only.backend)} {md_text(only.verdict)}"
    parts = [f"{md_text(g.key)}: {md_text(g.kind)}", f"{md_text(g.base.verdict)} → {md_text(g.head.verdict)}"]
    if g.gained:
        parts.append("now fused " + ", ".join(md_text(o, 40) for o in g.gained))
    if g.lost:
        parts.append("no longer fused " + ", ".join(md_text(o, 40) for o in g.lost))
    if g.backend_switched:
        parts.append(f"backend {md_text(g.base.backend)} → {md_text(g.head.backend)}")
    return "; ".join(parts)


def _render_md(cmp: Comparison, max_gemms: int, max_env: int, err_chars: int) -> str:
    out = [(f"## kernelscope compare: {md_code(cmp.base_label, 80, in_table=False)} → "
           f"{md_code(cmp.head_label, 80, in_table=False)}"), ""]
    if cmp.comparable is not None:
        out += [f"**{md_text(cmp.comparable.headline, 600)}**", ""]
    if cmp.environment:
        out.append("Environment changes: " + "; ".join(
            f"{md_text(k, 60)} {md_text(b, 60)} → {md_text(h, 60)}" for k, b, h in cmp.environment[:max_env]))
        out.append("")
    out.append("| Mode | Status | Latency base → head | Change (head vs base) | Kernels/iter | First call |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for m in cmp.modes:
        status = m.status_change or (m.head.status if m.head else fmt.DASH)
        lat_b = fmt.ms(m.base.latency_ms.median) if m.base and m.base.latency_ms else fmt.DASH
        lat_h = fmt.ms(m.head.latency_ms.median) if m.head and m.head.latency_ms else fmt.DASH
        kd = m.kernels_delta
        kernels = f"{fmt.count(kd.base)} → {fmt.count(kd.head)}" if kd else fmt.DASH
        fc_b = fmt.seconds(m.base.first_call_s) if m.base else fmt.DASH
        fc_h = fmt.seconds(m.head.first_call_s) if m.head else fmt.DASH
        mark = " (not comparable)" if cmp.comparable is not None and not cmp.comparable.ok else ""
        out.append(f"| {md_text(m.name, 40)}{mark} | {md_text(status)} | {lat_b} → {lat_h} | {_latency_cell(m)} "
                   f"| {kernels} | {fc_b} → {fc_h} |")
    out.append("")
    out.append("Change: head vs base, read one way (\"1.10× slower\": head takes 1.10× base's time). "
               "A change is beyond noise (\"faster\"/\"slower\") only when the two runs' 95% intervals of the "
               "median (across processes) do not overlap; otherwise \"within noise\".")
    pads = [f"- **{md_text(m.name, 40)}**: {md_text(m.pad_note, 300)}" for m in cmp.modes if m.pad_note]
    if pads:
        out += ["", *pads]
    cat_lines = []
    for m in cmp.modes:
        changed = [c for c in m.categories if c.delta]
        if changed and m.base and m.head:
            cat_lines.append(f"- **{md_text(m.name, 40)}**: " + ", ".join(
                f"{md_text(c.key)} {fmt.count(c.base)} → {fmt.count(c.head)}" for c in changed))
    if cat_lines:
        out += ["", "### Kernel counts per iteration by category", "", *cat_lines]
    gemm_lines = []
    for m in cmp.modes:
        for g in m.changed_gemms[:max_gemms]:
            gemm_lines.append(f"- **{md_text(m.name, 40)}** {_gemm_change_text(g)}")
        if len(m.changed_gemms) > max_gemms:
            gemm_lines.append(f"- _{len(m.changed_gemms) - max_gemms} more GEMM changes in {md_text(m.name, 40)}; "
                              "see compare.html._")
    if gemm_lines:
        out += ["", "### GEMM verdicts and backends", "", *gemm_lines]
    for m in cmp.modes:
        out += rank_compare_markdown(m.name, m.ranks)
    if cmp.new_failures:
        out += ["", "### New failures", ""]
        for m in cmp.new_failures:
            assert m.head is not None
            first = (m.head.error or "").strip().splitlines()
            out.append(f"- **{md_text(m.name, 40)}** ({md_text(m.head.status)}): "
                       f"{md_text(first[-1] if first else '', err_chars)}")
    if cmp.fixed:
        out += ["", "Fixed: " + ", ".join(md_text(m.name, 40) for m in cmp.fixed)]
    return "\n".join(out) + "\n"


def render_compare_markdown(cmp: Comparison) -> str:
    max_gemms, max_env, err = 20, 20, 400
    text = _render_md(cmp, max_gemms, max_env, err)
    while len(text) >= MAX_CHARS and max_gemms > 1:
        max_gemms, max_env, err = max_gemms // 2, max(max_env // 2, 3), max(err // 2, 80)
        text = _render_md(cmp, max_gemms, max_env, err)
    if len(text) >= MAX_CHARS:
        note = "\n\n_Truncated to fit a pull-request comment; see compare.html._\n"
        text = text[: MAX_CHARS - len(note) - 1].rsplit("\n", 1)[0] + note
    return text
