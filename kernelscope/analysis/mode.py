"""From capture files to the result: one ModeResult per mode, one RunResult per run. Pure: no torch import.

Inputs are paths (capture.json, the trace, Inductor code files), so the same code serves ``kernelscope
profile`` right after capture and ``kernelscope analyze`` on a machine without a GPU.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import re
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kernelscope import __version__, vocab
from kernelscope.analysis.autotune import autotune_for_gemm, autotune_results, decision_notes
from kernelscope.analysis.comm import communication
from kernelscope.analysis.contention import busy_host_note, contention_note
from kernelscope.analysis.dynamic import dynamic_summary
from kernelscope.analysis.facts import with_facts
from kernelscope.analysis.gemm import gemm_report, parse_log
from kernelscope.analysis.gemm.coverage import compare_with_eager
from kernelscope.analysis.kernels import KernelAnalysis, analyze_kernels, cpu_names, cpu_names_kept
from kernelscope.analysis.launch import launch_profile
from kernelscope.analysis.recommend import recommend
from kernelscope.analysis.roofline import peaks_for, with_roofline
from kernelscope.analysis.stats import combine_processes
from kernelscope.errors import CodeFileError, KernelscopeError
from kernelscope.inductor_code import OutputCode, parse_output_code
from kernelscope.provenance import PROVENANCE_SUFFIX, parse_graph_callers, parse_inductor_provenance
from kernelscope.result import (
    SCHEMA,
    CompileInfo,
    DynamoStats,
    Evidence,
    EvidenceRule,
    LatencyStats,
    MemoryPeaks,
    ModeConfig,
    ModeResult,
    Note,
    NumericsResult,
    RunEnvironment,
    RunResult,
    Status,
    SweepPoint,
    WhyNot,
    WhyNotReason,
    part_from_json,
    to_json,
)
from kernelscope.trace import Trace, gc_paused, load_trace

if TYPE_CHECKING:  # (imported where a capture is read: `analyze` reads none, and capture_record's records cost
    # ~30 ms to define)
    from kernelscope.capture_record import CaptureRecord, Environment


def load_codes(paths: Sequence[Path]) -> list[OutputCode]:
    codes: list[OutputCode] = []
    for p in paths:
        try:
            text = Path(p).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise CodeFileError(f"Inductor code file {p} does not exist", "pass the output code files the run saved")
        except OSError as exc:
            raise CodeFileError(f"Inductor code file {p} cannot be read ({exc.strerror})", "check the path")
        parsed = parse_output_code(text, str(p))
        if len(parsed) == 1:  # the worker writes one graph per file, its provenance and callers beside
            prov, callers = _provenance_beside(Path(p)), _callers_beside(Path(p))
            if prov is not None or callers is not None:
                parsed = (dataclasses.replace(parsed[0], provenance=prov, callers=callers),)
        codes.extend(parsed)
    return codes


def _provenance_beside(path: Path) -> Any:
    """Inductor's provenance the worker saved beside a graph's code (graph_0.py -> graph_0.provenance.json),
    parsed; None when there is none or it cannot be read (provenance is evidence: the code still analyses)."""
    side = path.with_name(path.stem + PROVENANCE_SUFFIX)
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return parse_inductor_provenance(data)


def _callers_beside(path: Path) -> Any:
    """The module that called each traced node, as the worker saved it beside a graph's code (graph_0.py ->
    graph_0.modules.json), parsed; None when there is none (an older worker, a torch whose Inductor it could not
    wrap) or it cannot be read."""
    from kernelscope.capture_record import CALLERS_SUFFIX

    try:
        data = json.loads(path.with_name(path.stem + CALLERS_SUFFIX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return parse_graph_callers(data)


def read_log(path: Path) -> str | None:
    """A worker's log, or its gzipped copy beside it (recorded fixtures keep large logs as log.txt.gz)."""
    import gzip

    for p in (path, path.with_name(path.name + ".gz")):
        try:
            raw = p.read_bytes()
        except OSError:
            continue
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8", errors="replace")
    return None


def _latency(data: dict[str, Any] | None) -> LatencyStats | None:
    if not data or data.get("median") is None:
        return None
    if "per_process" not in data:
        # One process (a capture from before --processes, or a run with --processes 1): its interval is the
        # bootstrap over its own samples, which covers the noise inside that process only.
        data = {**data, **{k: v for k, v in combine_processes([data]).items()
                           if k in ("low", "high", "interval", "outliers", "outlier_samples", "per_process",
                                    "processes", "cpus", "cpu_spread", "cpu_repins", "others_cpu",
                                    "steal_cpu", "cpu_count", "threads")}}
    return LatencyStats(
        median=data["median"], iqr=data["iqr"], q1=data["q1"], q3=data["q3"], min=data["min"], mean=data["mean"],
        samples=tuple(data.get("samples") or ()), timer=data.get("timer", ""),
        calls_per_sample=data.get("calls_per_sample"), windows=data.get("windows"), drift=data.get("drift"),
        per_process=tuple(data.get("per_process") or ()), processes=data.get("processes"),
        process_samples=tuple(tuple(g) for g in data.get("process_samples") or ()),
        low=data.get("low"), high=data.get("high"), interval=data.get("interval") or "",
        outliers=tuple(data.get("outliers") or ()), outlier_samples=int(data.get("outlier_samples") or 0),
        cpus=tuple(data.get("cpus") or ()), cpu_spread=data.get("cpu_spread"),
        cpu_repins=int(data.get("cpu_repins") or 0),
        others_cpu=tuple(data.get("others_cpu") or ()), steal_cpu=tuple(data.get("steal_cpu") or ()),
        cpu_count=data.get("cpu_count"), threads=data.get("threads"),
    )


def pinning_note(lat: LatencyStats) -> Note | None:
    """What --cpu-pinning did, when it pinned anything: the CPU of each process, how far the CPUs' speeds for
    this model differed (when by 10% or more) and how many timed windows were moved to another CPU."""
    pinned = [c for c in lat.cpus if c is not None]
    if not pinned:
        return None
    return Note("pinned", {"cpus": pinned, "spread": lat.cpu_spread if lat.cpu_spread and lat.cpu_spread >= 1.1
                           else None, "repins": lat.cpu_repins})


def capture_latency(capture: CaptureRecord) -> tuple[LatencyStats | None, list[Note]]:
    """The mode's latency from its capture record: across processes when ``--processes`` gave it several
    (``capture.processes``, written by capture/runner.py merge_processes), and the notes that go with it."""
    procs = capture.processes
    if len(procs) < 2:
        lat = _latency(capture.latency_ms.to_json() if capture.latency_ms is not None else None)
        pin = pinning_note(lat) if lat else None
        busy = contention_note(lat) if lat else None
        host = busy_host_note(lat) if lat else None
        return lat, [*([busy] if busy else []), *([host] if host else []), *([pin] if pin else []),
                     *outlier_notes(lat)]
    notes = []
    # analysis/stats.py works on latency records in the capture's JSON form (ms, "median", "samples", ...)
    combined = combine_processes([p.latency_ms.to_json() if p.latency_ms is not None else None for p in procs])
    for p in procs:
        if p.status != "ok" or p.latency_ms is None:
            notes.append(Note("process-measured-nothing", {"process": p.process, "of": len(procs),
                                                           "status": p.status,
                                                           "error": (p.error or "no timings")[:200]}))
    drifted = [p.process for p in procs if p.drifted]
    if drifted:
        notes.append(Note("still-drifted", {"processes": drifted}))
    lat = _latency(combined) if combined else None
    if lat is not None:
        notes.insert(0, Note("timed-in-processes", {"processes": lat.processes, "medians": list(lat.per_process),
                                                    "median": lat.median, "low": lat.low, "high": lat.high}))
        pin = pinning_note(lat)
        if pin:
            notes.insert(1, pin)
        host = busy_host_note(lat)
        if host:
            notes.insert(1, host)
        busy = contention_note(lat)
        if busy:
            notes.insert(1, busy)
        notes.extend(outlier_notes(lat))
    return lat, notes


def outlier_notes(lat: LatencyStats | None) -> list[Note]:
    """The latency's flagged samples and processes as the mode's findings."""
    return [Note("latency-outliers", {"outlier": to_json(o)}) for o in (lat.outliers if lat else ())]


def analyze_mode_trace(
    trace: Trace,
    codes: Sequence[OutputCode],
    *,
    mode: str,
    config: ModeConfig | None,
    log_text: str | None,
    iterations: int | None = None,
    peaks: dict[str, Any] | None = None,
    param_names: Sequence[str] | None = None,
    module_prefix: str = "",
    dispatch: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The trace-derived fields of a ModeResult (kernels, categories, GEMM verdicts with their roofline and
    autotune tables, iterations). ``peaks``: result.json's "peaks" (datasheet and calibrated ceilings);
    ``param_names``: the model's parameters as the worker listed them (module paths for compiled GEMMs);
    ``module_prefix``: what the capture's paths carry before the user's model's own (``module_prefix``);
    ``dispatch``: the capture's dispatch count (capture.json ``dispatch``), the GEMM coverage's oracle."""
    # The cyclic GC paused: the passes build many small acyclic objects, and each collection they set off would
    # walk every record of the trace (a tenth of the analysis on a 1M-event trace).
    # The distinct CPU op names, read once for all the passes (kernels.cpu_names).
    with gc_paused(), cpu_names_kept(trace):
        ka: KernelAnalysis = analyze_kernels(trace, iterations)
        cfg = config or ModeConfig()
        # The GEMM engine's settings (analysis/gemm/model.py _Config.of): what the mode's config recorded, else
        # what the code and the trace say.
        gemm_config = {
            "compiled": bool(codes) if cfg.compiled is None else cfg.compiled,
            "max_autotune": cfg.max_autotune,
            "gemm_backends": cfg.gemm_backends,
            "device": cfg.device or ka.device,
            "capability": cfg.capability,
            "freezing": bool(cfg.freezing),
            "param_names": param_names,
            "module_prefix": module_prefix,
            "dispatch": dispatch,
        }
        facts = parse_log(log_text)  # once: the GEMM verdicts and the autotune tables both read it
        report = gemm_report(ka, trace, codes, mode=mode, mode_config=gemm_config, log_text=log_text, log=facts)
        gemms, summary = report.gemms, report.summary
        gemms = with_roofline(gemms, peaks)
        sources = {k.name: k.source for c in codes for k in c.kernels if k.source}
        autotune = autotune_results(log_text, gemms, cfg.gemm_backends, kernel_sources=sources, facts=facts)
        gemms = _mark_marginal(gemms, autotune)
        finite = [e - s for s, e in ka.windows if e != float("inf")]
        return {
            "launch": launch_profile(ka, trace),
            "profiled_iteration_ms": statistics.median(finite) / 1000.0 if finite else None,
            "device": ka.device,
            "kernels_per_iter": ka.kernels_per_iter,
            "memops_per_iter": ka.memops_per_iter,
            "kernels_by_category": ka.by_category,
            "kernels_by_backend": ka.by_backend,
            "gpu_time_us_per_iter": ka.time_us_per_iter,
            "kernels": ka.stats,
            "gemms": gemms,
            "gemm_summary": summary,
            "gemm_groups": report.groups,
            "epilogue_cost": report.cost,
            "gemm_coverage": report.coverage,
            "iterations": ka.iterations,
            "timeline": timeline(ka),
            "autotune": autotune,
            "communication": communication(ka, trace),
        }




# A close compile-time decision (analysis/autotune.py ``decision_notes``) as a GEMM's evidence and why-not.
_DECISION_RECORDS = {
    "autotune-marginal": (EvidenceRule.AUTOTUNE_MARGINAL, WhyNotReason.AUTOTUNE_MARGINAL),
    "fusion-benchmark-marginal": (EvidenceRule.FUSION_BENCHMARK_MARGINAL, WhyNotReason.FUSION_BENCHMARK_MARGINAL),
}


def _mark_marginal(gemms: Sequence[Any], autotune: Sequence[Any]) -> tuple[Any, ...]:
    """A GEMM whose deciding compile-time benchmark (autotune table, epilogue-fusion benchmark) was close says so
    in its verdict's evidence and why-not."""
    out = []
    for g in gemms:
        said = decision_notes(g, autotune_for_gemm(autotune, g.id))
        if not said:
            out.append(g)
            continue
        records = [(*_DECISION_RECORDS[n.code], n.args) for n in said]
        out.append(dataclasses.replace(
            g, evidence=tuple(g.evidence) + tuple(Evidence.of(rule, "autotune", **facts) for rule, _, facts in records),
            why_not=tuple(g.why_not) + tuple(WhyNot.of(reason, **facts) for _, reason, facts in records)))
    return tuple(out)


def timeline(ka: KernelAnalysis, iteration: int = 0) -> tuple[Any, ...]:
    """Kernels of one iteration as (name, category, start, duration) relative to its first kernel, in µs."""
    from kernelscope.result import TimelineEntry

    ks = list(ka.iteration(iteration))  # (its instances in instance order, found without a scan of them all)
    if not ks:
        return ()
    t0 = min(k.ts for k in ks)
    return tuple(TimelineEntry(name=k.name, category=k.category, start_us=k.ts - t0, dur_us=k.dur)
                 for k in sorted(ks, key=lambda k: k.ts))


_LOWERING_TARGET = re.compile(r"^\s*target: (aten\.\w+)", re.M)


def _failure_explained(capture: CaptureRecord, out_dir: Path) -> tuple[Note, ...]:
    """What a failed max-autotune mode's raw Inductor error means, from the backend facts (kernelscope/vocab.py):
    NVGEMM alone on an SM90 GPU has no choice for a GEMM with a bias (seen on the H200 with torch 2.14.1)."""
    from kernelscope import vocab

    err = capture.error
    if capture.status == Status.OK.value or "NoValidChoicesError" not in err:
        return ()
    from kernelscope.capture_record import CaptureConfig

    cfg = capture.config or CaptureConfig()
    gb = cfg.gemm_backends if isinstance(cfg.gemm_backends, tuple) else ()
    backends = [b.strip().upper() for b in gb]
    log = read_log(out_dir / capture.log) if capture.log else None
    targets = list(dict.fromkeys(_LOWERING_TARGET.findall(log or "") or _LOWERING_TARGET.findall(err)))
    cap = cfg.capability if isinstance(cfg.capability, str) else ""
    major = int(cap.split(".")[0]) if cap.split(".")[0].isdigit() else None
    if backends == ["NVGEMM"] and major is not None and major < 10 and any(
            t.split(".")[-1] in vocab.BIAS_OPS for t in targets):
        fact = vocab.FACTS["nvgemm-sm90-no-addmm"]
        return (Note("nvgemm-no-choice", {"targets": targets, "capability": cap, "fact": fact.text,
                                          "seen": fact.seen}),)
    return (Note("no-backend-choice", {"backends": backends, "targets": targets}),)


_P = TypeVar("_P")


def _part(cls: type[_P], part: Any) -> _P | None:
    """A capture record's part (``MemoryRecord``, ``Numerics``, ...) as the result keeps it: the result's record
    of the same fields (kernelscope/result.py), None when the worker wrote nothing of it."""
    data = part.to_json() if part is not None else {}
    return part_from_json(cls, data) if data else None


def run_environment(env: Environment | None, interpreter: Mapping[str, Any] | None = None) -> RunEnvironment:
    """The run's environment from a worker's record, with the interpreter the workers ran under (``--python``)."""
    data = env.to_json() if env is not None else {}
    if interpreter:
        data["interpreter"] = dict(interpreter)
    return part_from_json(RunEnvironment, data)


# kernelscope's keyword-inputs wrapper (modelfile.KeywordInputs) held the user's model as ``model``: captures of
# older workers named every module of such a model "model.<path>" (a path get_submodule does not find).
WRAPPER_PREFIX = "model."


def module_prefix(capture: CaptureRecord) -> str:
    """What a capture's module paths carry before the user's model's own, to drop from every path shown: the
    capture says so (""); an older one, which does not, is read as wrapped when every parameter name starts with
    "model." (the wrapper held nothing else; a model of the user's own whose only child is ``model`` looked the
    same in those captures)."""
    if capture.module_prefix is not None:
        return capture.module_prefix
    names = capture.param_names
    return WRAPPER_PREFIX if names and all(n.startswith(WRAPPER_PREFIX) for n in names) else ""


@dataclasses.dataclass(frozen=True, slots=True)
class TraceFields:
    """What a capture's files (trace, output code, compile log) give a ModeResult, analysed ahead of the rest of
    its record (``profile`` analyses a mode's first process while its later processes compile): the fields, or
    the note saying why the analysis failed (None when it did not); ``files`` says which capture's files they
    are."""

    files: tuple[Any, ...]
    fields: dict[str, Any]
    failed: Note | None = None


def _files_of(capture: CaptureRecord) -> tuple[Any, ...]:
    """What the trace analysis reads of a capture record: a record merged later (processes added) keeps it."""
    return (capture.status, capture.mode, capture.trace, capture.log, tuple(capture.inductor_code), capture.config,
            tuple(capture.param_names or ()), capture.module_prefix, capture.dispatch)


def trace_fields(out_dir: Path, capture: CaptureRecord, *, iterations: int | None = None,
                 peaks: dict[str, Any] | None = None) -> TraceFields:
    """The trace-derived fields of the capture's ModeResult (analyze_mode_trace on its files); none for a mode
    that did not finish or left no trace."""
    if capture.status != Status.OK.value or not capture.trace:
        return TraceFields(_files_of(capture), {})
    log_text = read_log(out_dir / capture.log) if capture.log else None
    try:
        trace = load_trace(out_dir / capture.trace)
        codes = load_codes([out_dir / p for p in capture.inductor_code])
        return TraceFields(_files_of(capture), analyze_mode_trace(
            trace, codes, mode=capture.mode or "?", config=_part(ModeConfig, capture.config), log_text=log_text,
            iterations=iterations, peaks=peaks, param_names=capture.param_names,
            module_prefix=module_prefix(capture),
            dispatch=capture.dispatch.to_json() if capture.dispatch is not None else None))
    except KernelscopeError as exc:
        # The measurements stand; only the trace analysis is lost, and the report says why.
        return TraceFields(_files_of(capture), {}, Note("trace-analysis-failed", {"error": exc.message}))


def build_mode_result(out_dir: Path, capture: CaptureRecord | Mapping[str, Any], *, iterations: int | None = None,
                      peaks: dict[str, Any] | None = None, traced: TraceFields | None = None) -> ModeResult:
    """Turn one mode's capture record (+ its trace and code files) into a ModeResult. ``capture``: the record,
    or capture.json's object as json.loads gave it (read with kernelscope/capture_record.py). ``traced``: its
    files' analysis made ahead (trace_fields, same iterations and peaks), used when it is of the same files."""
    from kernelscope.capture_record import CaptureRecord, capture_from_json

    if not isinstance(capture, CaptureRecord):
        capture = capture_from_json(capture, where=str(out_dir))
    latency, latency_notes = capture_latency(capture)
    base: dict[str, Any] = {
        "name": capture.mode or "?",
        "status": capture.status,
        "error": capture.error,
        "error_kind": capture.error_kind,
        "device": capture.device,
        "first_call_s": capture.first_call_s,
        "latency_ms": latency,
        "peak_memory_bytes": capture.peak_memory_bytes,
        "memory": _part(MemoryPeaks, capture.memory),
        "max_abs_error": capture.max_abs_error,
        "max_rel_error": capture.max_rel_error,
        "numerics": _part(NumericsResult, capture.numerics),
        "trace": capture.trace,
        "inductor_code": capture.inductor_code,
        "log": capture.log,
        "config": _part(ModeConfig, capture.config),
        "notes": capture.notes,
        "findings": tuple(latency_notes) + _failure_explained(capture, out_dir),
        "compile": _part(CompileInfo, capture.compile),
        "dynamo": _part(DynamoStats, capture.dynamo),
    }
    if traced is None or traced.files != _files_of(capture):
        traced = trace_fields(out_dir, capture, iterations=iterations, peaks=peaks)
    base.update(traced.fields)
    if traced.failed is not None:
        base["findings"] = base["findings"] + (traced.failed,)
    timing = timing_notes(base)
    if timing and timing[0].code in PROFILED:
        base["contradiction"] = timing[0]
    base["findings"] = base["findings"] + tuple(timing) + tuple(gemm_notes(
        base.get("gemms", ()), base.get("gemm_groups", ()), base.get("autotune", ())))
    return ModeResult(**base)


def gemm_notes(gemms: Sequence[Any], groups: Sequence[Any], autotune: Sequence[Any]) -> list[Note]:
    """One note ("compile-may-differ") per distinct reason another compile may decide a GEMM differently, naming
    every GEMM it holds for: a group of identical layers by its label and count when all its members share the
    note (``GEMM layers.0-15.mlp.up_proj x16: autotune choice marginal ...``: one line, not one per layer), else
    each GEMM by its module path (or its id where it has none). ``why``: the compile-time decision's own note
    (analysis/autotune.py ``decision_notes``), as its JSON."""
    by_note: dict[str, tuple[Any, list[Any]]] = {}
    for g in gemms:
        for note in decision_notes(g, autotune_for_gemm(autotune, g.id)):
            why = to_json(note)
            by_note.setdefault(json.dumps(why, sort_keys=True), (why, []))[1].append(g)
    out = []
    for why, held in by_note.values():
        ids = {g.id for g in held if g.module}  # a group by its label: only layers with a module path
        names: list[str] = []
        named: set[str] = set()
        for grp in groups:
            if grp.count > 1 and grp.members and set(grp.members) <= ids:
                names.append(f"{grp.label} \u00d7{grp.count}")
                named.update(grp.members)
        names += [g.module or g.id for g in held if g.id not in named]
        out.append(Note("compile-may-differ", {"gemms": names, "why": why}))
    return out


def timed_in_fewer_processes(mode: ModeResult, ran: int, processes: int, why: str) -> ModeResult:
    """A mode timed in fewer processes than asked because the run was interrupted: it says so first among its
    findings (printed where the worker's notes end)."""
    note = Note("timed-in-fewer-processes", {"ran": ran, "of": processes, "why": why})
    return dataclasses.replace(mode, findings=(note, *mode.findings))


# The profiled iterations run a few times with the profiler on and a synchronize per step; their time is set
# against the steady median only when it is outside the median's interval by at least this much.
CONTRADICTION_RATIO = 1.10
# The notes that set the profiled iterations against the steady median (ModeResult.contradiction)
PROFILED = ("profiled-kernels-slower", "profiled-slower", "profiled-faster")


def timing_notes(fields: dict[str, Any]) -> list[Note]:
    """Said out loud: the profiled iterations' time against the steady median when they disagree beyond noise,
    and where a launch-bound iteration's time goes."""
    from kernelscope.analysis.stats import median_interval

    out: list[Note] = []
    lat: LatencyStats | None = fields.get("latency_ms")
    prof = fields.get("profiled_iteration_ms")
    launch = fields.get("launch")
    config: ModeConfig | None = fields.get("config")
    cudagraphs = bool(config is not None and config.cudagraphs)
    if lat is not None and prof:
        low, high, method = median_interval(lat)
        low = lat.median if low is None else low
        high = lat.median if high is None else high
        # the profiled time (or its kernels alone), the steady median and its 95% interval, in ms
        args = {"median": lat.median, "low": low, "high": high, "interval": method}
        gpu = launch.gpu_busy_us / 1000.0 if launch is not None else None
        if gpu is not None and gpu > high * CONTRADICTION_RATIO:
            out.append(Note("profiled-kernels-slower", {"profiled": gpu, **args}))
        elif prof > high * CONTRADICTION_RATIO:
            out.append(Note("profiled-slower", {"profiled": prof, **args}))
        elif prof < low / CONTRADICTION_RATIO:
            out.append(Note("profiled-faster", {"profiled": prof, **args}))
    if launch is not None and launch.launch_bound:
        # The headline idle share is against the steady median (the profiler inflates the CPU side); the
        # profiled iteration's own split follows it.
        steady = None
        idle = launch.gpu_idle_pct
        if lat is not None and lat.median > 0:
            idle = 100.0 * max(0.0, 1.0 - launch.gpu_busy_us / (lat.median * 1000.0))
            steady = lat.median
        out.append(Note("gpu-idle", {"idle_pct": idle, "steady_ms": steady, "gpu_busy_us": launch.gpu_busy_us,
                                     "wall_us": launch.wall_us, "launch_path_us": launch.launch_path_us,
                                     "launches": launch.launches, "runtime_us": launch.runtime_us,
                                     "cudagraphs": cudagraphs}))
    return out


def build_run_result(
    modes: Sequence[ModeResult],
    *,
    environment: RunEnvironment,
    command: str,
    model: str,
    device: str,
    dtype: str,
    settings: dict[str, Any],
    findings: Sequence[Note] = (),
    points: Sequence[SweepPoint] = (),
    peaks: dict[str, Any] | None = None,
) -> RunResult:
    """The run's result. With a sweep, ``modes`` is the first point's (one shape for tools that read one) and
    ``points`` holds every shape; the recommendation, the dynamic-vs-static summary and every other fact the
    reports show (analysis/facts.py) are derived here once. ``findings``: what analysis noted of the run as a whole."""
    # each compiled mode's GEMM count against eager's (the coverage self-check's cross-mode warning)
    modes = compare_with_eager(modes)
    points = tuple(dataclasses.replace(p, modes=compare_with_eager(p.modes)) for p in points)
    if points:
        recommendation = tuple(recommend(p.modes, p.params, p.label) for p in points)
        dynamic = dynamic_summary(points)
    else:
        recommendation = (recommend(modes, {}, ""),) if modes else ()
        dynamic = dynamic_summary([SweepPoint({}, "", tuple(modes))]) if modes else None
    return with_facts(RunResult(
        schema=SCHEMA,
        tool_version=__version__,
        created=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        command=command,
        model=model,
        device=device,
        dtype=dtype,
        environment=environment,
        modes=tuple(modes),
        settings=settings,
        findings=tuple(findings),
        points=tuple(points),
        recommendation=recommendation,
        dynamic=dynamic,
        peaks=dict(peaks or {}),
    ))


_INDUCTOR_KERNEL = vocab.INDUCTOR_KERNEL


def analyze_trace_file(
    trace_path: Path,
    code_paths: Sequence[Path],
    *,
    mode: str,
    iterations: int | None,
    log_path: Path | None,
    command: str,
    config: ModeConfig | None = None,
    keep: list[Any] | None = None,
) -> RunResult:
    """``kernelscope analyze``: one mode from a trace made elsewhere. ``keep``: a list that holds the trace past the
    call (a command line that ends its process right after skips freeing a large trace's records one by one)."""
    trace = load_trace(trace_path)
    if keep is not None:
        keep.append(trace)
    with cpu_names_kept(trace):  # read once here and by the analysis (kernels.cpu_names)
        codes = load_codes(code_paths)
        log_text = log_path.read_text(encoding="utf-8", errors="replace") if log_path else None
        cfg = config or ModeConfig()
        if cfg.compiled is None:
            # Without --code, Inductor's kernels in the trace still say it was compiled (never "eager: ATen runs
            # ..."). (each distinct name tested once: names repeat once per iteration)
            # (the CPU's names first: a compiled trace's kernel launches are CPU ops of the kernel's name too)
            cfg = dataclasses.replace(cfg, compiled=bool(codes) or any(map(_INDUCTOR_KERNEL.match, cpu_names(trace)))
                                      or any(map(_INDUCTOR_KERNEL.match, {e.name for e in trace.gpu})))
        env: dict[str, Any] = {}
        if trace.device_properties:
            p = trace.device_properties[0]
            env["gpu"] = p.get("name")
            if "computeMajor" in p:
                env["capability"] = f"{p.get('computeMajor')}.{p.get('computeMinor')}"
        # Datasheet peaks only: a trace made elsewhere says which GPU, not which machine's calibration applies.
        peaks = peaks_for({**env, "device": "cuda" if env.get("gpu") else "cpu"}, None)
        fields = analyze_mode_trace(trace, codes, mode=mode, config=cfg, log_text=log_text, iterations=iterations,
                                    peaks=peaks)
        env = {"device": fields["device"], **env}
        # The header of a trace-only report: what the trace's metadata says (kernelscope's worker adds the torch
        # version; Kineto writes the CUDA versions as 13000 for 13.0).
        if trace.meta.get("pytorch_version"):
            env["torch"] = str(trace.meta["pytorch_version"])
        for key, name in (("cuda_runtime_version", "cuda"), ("cuda_driver_version", "cuda_driver_version")):
            v = trace.meta.get(key)
            if isinstance(v, int) and v > 0 and fields["device"] == "cuda":
                env[name] = f"{v // 1000}.{v % 1000 // 10}"
        findings = (Note("malformed-events-skipped", {"events": trace.skipped_events}),) if trace.skipped_events \
            else ()
        mr = ModeResult(name=mode, status=Status.OK.value, trace=str(trace_path),
                        inductor_code=tuple(str(p) for p in code_paths), config=cfg, findings=findings, **fields)
        return build_run_result(
            [mr], environment=part_from_json(RunEnvironment, env), command=command, model=Path(trace_path).name,
            device=fields["device"], dtype="", settings={"source": "analyze", "iterations": iterations},
            findings=findings, peaks=peaks,
        )


