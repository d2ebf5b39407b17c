"""The words of what analysis decided: one function per Note code (result.py ``Note``), the only place that says
a verdict's reason, a rule with its numbers, a hint or a piece of advice in English.

``say(note)`` writes one Note; ``say_all(notes)`` several, joined as one sentence. A code without words here (a
result.json written by a newer kernelscope) reads as its code and arguments, never as an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kernelscope import fmt
from kernelscope.analysis.compare import Comparable
from kernelscope.report.evidence_words import autotune_marginal_words, fusion_benchmark_words
from kernelscope.result import AutotuneResult, Note, Recommendation, Speedup

Args = Mapping[str, Any]

# What a busy host costs a timing (analysis/contention.py STEAL_BUSY marks one): said beside a comparison of timings
# taken on a host in different states.
HOST_SLOWDOWN = "on the H100 VMs measured, a launch-bound mode read about 1.3x slower on a busy host"
HOST_CAVEAT = f"{HOST_SLOWDOWN} (the hypervisor's steal marks it)"


# ------------------------------------------------------------------------------------------------ numerics
def _tol(a: Args) -> str:
    tol = a.get("tol")
    return fmt.sci(tol) if tol is not None else "tol"


def _reference(a: Args) -> str:
    """The reference as its dtype names it ("the float32 reference"; "the reference" in a result that did not say)."""
    dtype = a.get("reference")
    return f"the {dtype} reference" if dtype else "the reference"


def _rmse_bound(a: Args, sign: str) -> str:
    return (f"rmse {fmt.sci(a.get('rmse'))} {sign} {a['multiplier']:g} × eager's {fmt.sci(a.get('eager_rmse'))} + "
            f"{_tol(a)}/10 = {fmt.sci(a.get('bound'))}")


# How to tell Inductor's higher-precision intermediates from an error (ResNet-50 bf16 on an H200, compiled default
# at 2.12x eager's rmse against the float64 reference, became bit-identical to eager with this flag).
PRECISION_HINT = ("Inductor keeps fused intermediates (normalisations, activations, residual adds) in float32 where "
                  "eager rounds each one to {dtype}; to tell that from an error, compile with "
                  "torch._inductor.config.emulate_precision_casts = True: if the output then matches eager, the "
                  "difference is that higher precision")

RULES: dict[str, Callable[[Args], str]] = {
    # torch's accuracy rule against the high-precision reference (float64, else float32), as applied to one output
    # (analysis/numerics.py)
    "allclose": lambda a: f"allclose to eager (atol = rtol = {_tol(a)})",
    "equal": lambda a: f"equal to eager (allclose, {_tol(a)})",
    "not-equal": lambda a: f"not equal to eager (allclose, {_tol(a)})",
    "rmse-nonfinite": lambda a: (f"rmse is NaN/Inf (eager's {fmt.sci(a.get('eager_rmse'))}): bound "
                                 f"{a['multiplier']:g} × eager's + {_tol(a)}/10"),
    "rmse-within": lambda a: _rmse_bound(a, "≤"),
    "rmse-over": lambda a: _rmse_bound(a, ">"),
    "eager-only": lambda a: "vs eager only (no high-precision reference)",
    "baseline": lambda a: f"the baseline: eager's own error against {_reference(a)}",
    "baseline-nonfinite": lambda a: f"NaN/Inf where {_reference(a)} is finite",
}

NUMERICS: dict[str, Callable[[Args], str]] = {
    "less-accurate-than-eager": lambda a: "less accurate than eager against the reference",
    "outside-tolerance-vs-eager": lambda a: "outside tolerance vs eager",
    "differs-but-closer": lambda a: (f"differs from eager beyond tolerance but is closer to the reference than "
                                     f"eager (rmse {a['rmse']:.3g} vs {a['eager_rmse']:.3g})"),
    "differs-but-passes-rule": lambda a: ("differs from eager beyond tolerance but passes torch's accuracy rule "
                                          f"against the reference ({say(Note(a['rule'], dict(a)))})"),
    "differs-but-as-close": lambda a: "differs from eager beyond tolerance but is as close to the reference as eager",
    "not-measured": lambda a: "not measured",
    "within-tolerance": lambda a: "within tolerance",
    "did-not-run": lambda a: f"the mode did not run ({a.get('status')})",
    "eager-is-reference": lambda a: "eager is the reference",
    "eager-did-not-run": lambda a: "eager did not run",
    "allclose-recorded": lambda a: "elementwise allclose recorded by the run",
    "maxima-within": lambda a: (f"max abs <= {fmt.sci(a.get('atol'))} or max rel <= {fmt.sci(a.get('rtol'))} "
                                f"({a.get('dtype')})"),
    "precision-casts": lambda a: PRECISION_HINT.format(dtype=a.get("dtype")),
}


# ------------------------------------------------------------------------------------------------ failed modes
def _use_mode(a: Args) -> str:
    vs = f", {fmt.speedup(a['speedup'])} than eager" if a.get("speedup") is not None else ""
    return f"use mode {a['mode']} instead (it works here: {fmt.ms(a.get('median_ms'))}{vs})"


ADVICE: dict[str, Callable[[Args], str]] = {
    "rerun-interrupted": lambda a: (f"the run was stopped before this mode finished: run it again to measure it "
                                    f"(--modes {a['mode']})"),
    "raise-timeout": lambda a: "raise --timeout if compile + autotune needs longer",
    "hint-no-cxx-compiler": lambda a: ("Inductor compiles C++ kernels for the CPU and found no working C++ compiler "
                                       "on this machine: install one (e.g. apt install g++) or set CXX to one, "
                                       "then rerun"),
    "hint-cute-dsl-arch": lambda a: ("set CUTE_DSL_ARCH to the GPU's architecture (sm_90a on H100/H200) so NVGEMM "
                                     "compiles for it"),
    "hint-no-valid-choices": lambda a: ("no GEMM choice of the requested backends compiled: add ATEN to "
                                        "--gemm-backends so autotuning keeps a fallback"),
    "hint-illegal-memory-access": lambda a: ("a kernel corrupted the CUDA context: drop that backend from "
                                             "--gemm-backends for this model"),
    "hint-out-of-memory": lambda a: "lower the batch size (--set batch_size=...) or use a smaller --dtype",
    "fix-earlier-failure": lambda a: "it did not run because an earlier mode found the model broken: fix that first",
    "fix-eager": lambda a: "eager itself failed: fix the model or its inputs first; compiled modes have no reference",
    "use-mode": _use_mode,
    "keep-eager": lambda a: "keep eager for this model: no compiled mode worked",
    "no-mode-worked": lambda a: "no mode worked: fix the error above and run again",
}

SKIPPED = "stopped after the model failed in an earlier mode"  # a failure group of modes that never started
# How the dynamic mode's recompiles read across a sweep (graphs compiled at the first point are the initial compile;
# later ones are recompiles)
DYNAMIC_NOTE = ("the first point compiles; a later point recompiles when a guard fails (guard_failures says which). "
                "Dynamo specialises sizes 0 and 1, so a sweep from batch 1 recompiles once at the next size.")


# ------------------------------------------------------------------------------------------------ recommendation
def note_from(d: Any) -> Note:
    """A Note held as its JSON ({"code", "args"}: inside another's arguments, in the device peaks); a sentence of an
    older result in its place as a "text" note."""
    if isinstance(d, Note):
        return d
    if isinstance(d, Mapping) and "code" in d:
        return Note(str(d["code"]), dict(d.get("args") or {}))
    return Note("text", {"text": "" if d is None else str(d)})



def _speed(a: Args, than: str = " than eager") -> str:
    # Read one way: "1.43× faster than eager, 95% CI 1.39–1.47× faster", never "0.98× vs eager".
    ci = f", 95% CI {fmt.speedup_interval(a.get('low'), a.get('high'))}" if a.get("low") is not None else ""
    return f"{fmt.speedup(a.get('speedup'))}{than}{ci}"


def _modes_why(a: Args) -> str:
    return ", ".join(f"{mode} ({say(note_from(why))})" for mode, why in a.get("modes", ()))


def _were(modes: Any) -> str:
    return "was" if len(modes) == 1 else "were"


def _launch_bound(a: Args) -> str:
    fix = ("even CUDA graphs leave the CPU side (Python, guards)" if a.get("cudagraphs")
           else "reduce-overhead (CUDA graphs) targets that")
    return (f"{a['mode']}: GPU idle {a['idle_pct']:.0f}% of the iteration ({fmt.us(a.get('gpu_busy_us'))} of kernels "
            f"in {fmt.ms(a.get('median_ms'))}): the CPU launch path dominates; {fix}")


def _eager_fails(a: Args) -> str:
    speed = _speed(a) if a.get("speedup") is not None else fmt.ms(a.get("median_ms"))
    return (f"eager's output fails numerics ({say(note_from(a.get('reason')))}): {a['mode']} is the fastest mode whose "
            f"output passes ({speed})" + (", slower than eager but correct" if a.get("slower") else ""))


RECOMMEND: dict[str, Callable[[Args], str]] = {
    "no-mode-ran": lambda a: "no mode ran successfully at this shape",
    "every-mode-fails-numerics": lambda a: (f"no mode is recommended: every mode that ran fails numerics: "
                                            f"{_modes_why(a)}; fix the model's numerics first (e.g. a wider --dtype)"),
    "keep-eager-none-compiled": lambda a: "no compiled mode worked here: keep eager",
    "eager-fastest": lambda a: "eager is the fastest mode here",
    "fastest-within-noise": lambda a: (f"the fastest compiled mode, {a['mode']} ({_speed(a)}), is within noise of "
                                       "eager and no compiled mode is faster beyond noise: keep eager (no compile "
                                       "cost, nothing to break)"),
    "compiled-slower": lambda a: f"compiled modes are slower beyond noise ({', '.join(a['modes'])})",
    "launch-bound": _launch_bound,
    "faster-beyond-noise": lambda a: f"{a['mode']} is faster than eager beyond noise ({_speed(a, than='')})",
    "tied-shortest-compile": lambda a: (f"within noise of {', '.join(a['modes'])}, and its first call (compile) is "
                                        "the shortest"),
    "eager-fails-numerics": _eager_fails,
    "fastest-working-no-eager": lambda a: f"{a['mode']} is the fastest working mode (eager did not run, so no speedup)",
    "but-busy-machine": lambda a: (f"but {', '.join(a['modes'])} {_were(a['modes'])} timed on a busy machine (other "
                                   "processes left the timed threads short of CPUs): rerun on an idle machine before "
                                   "acting on this"),
    "but-busy-host": lambda a: (f"but {', '.join(a['modes'])} {_were(a['modes'])} timed on a busy host and the other "
                                f"modes on a quiet one ({HOST_CAVEAT}): rerun before acting on this"),
    "not-considered": lambda a: f"not considered: {_modes_why(a)}",
    # why a candidate is not eligible
    "did-not-run-status": lambda a: f"{a.get('status')}" + (f" ({a['error_kind']})" if a.get("error_kind") else ""),
    "no-latency": lambda a: "no latency measured",
    "numerics-fail": lambda a: f"numerics fail: {say(note_from(a.get('reason')))}",
}


# ------------------------------------------------------------------------------------------------ a mode's timing
def _which(a: Args) -> str:
    """"its only process", "all its processes", "processes 1, 3 of 5"."""
    busy, n = a["processes"], a["of"]
    if n == 1:
        return "its only process"
    if len(busy) == n:
        return "all its processes"
    return "process" + ("es " if len(busy) > 1 else " ") + ", ".join(str(i) for i in busy) + f" of {n}"


def _busy_machine(a: Args) -> str:
    return (f"timed on a busy machine: other processes kept up to {a['busiest']:.1f} of the {a['cpu_count']:.0f} "
            f"CPUs busy while {_which(a)} warmed up and timed, and the timed calls need {a['threads']:.0f}: threads "
            "waited for a CPU, so this latency measures the machine's load as much as the model; rerun on an idle "
            "machine (on the CPU device, OMP_NUM_THREADS at or below the idle CPUs also avoids the wait)")


def _busy_host(a: Args) -> str:
    lo, hi = a["steal"]
    steal = f"{lo:.3f}" if lo == hi else f"{lo:.3f}-{hi:.3f}"
    return (f"timed on a busy host: the hypervisor ran other guests on this VM's CPUs ({steal} CPUs of steal on "
            f"average) while {_which(a)} warmed up and timed; on the H100 VMs measured, a launch-bound mode timed so "
            "read about 1.3x slower than on the same host quiet, for minutes at a time, so a rerun may read faster; "
            "compare runs timed on a host in the same state")


def _pinned(a: Args) -> str:
    spread = (f"; the CPUs' speeds for this model differed up to {a['spread']:.2g}x (contention on a shared host)"
              if a.get("spread") else "")
    again = (f"; {a['repins']} timed window(s) ran slower than the chosen CPU's probe promised and were timed again "
             "after a new choice" if a.get("repins") else "")
    return (f"each process timed with its launching thread on the CPU where the model ran fastest (CPU "
            f"{', '.join(str(c) for c in a['cpus'])}){spread}{again}; --cpu-pinning off times where the scheduler "
            "puts it")


def _timed_in_processes(a: Args) -> str:
    meds = ", ".join(f"{m:.4g}" for m in a["medians"])
    iv = (f"; 95% interval across processes {a['low']:.4g}-{a['high']:.4g} ms"
          if a.get("low") is not None and a.get("high") is not None else "")
    return f"timed in {a['processes']} processes, medians {meds} ms: median of medians {a['median']:.4g} ms{iv}"


def _for(targets: Any) -> str:
    return f" for {', '.join(targets)}" if targets else ""


def _names(names: Any, limit: int = 6) -> str:
    """The first ``limit`` names, and how many more."""
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _steady(a: Args) -> str:
    """"the steady median 120.0 µs (95% interval inside one process 118.2-121.9 µs)"."""
    what = "across processes" if a.get("interval") == "processes" else "inside one process"
    return (f"the steady median {a['median'] * 1000:.1f} µs (95% interval {what} {a['low'] * 1000:.1f}-"
            f"{a['high'] * 1000:.1f} µs)")


def _gpu_idle(a: Args) -> str:
    steady = f" of the steady {a['steady_ms'] * 1000:.1f} µs" if a.get("steady_ms") is not None else ""
    split = (f"{a['gpu_busy_us']:.1f} µs of kernels{steady}; profiled: {a['gpu_busy_us']:.1f} µs busy of "
             f"{a['wall_us']:.1f} µs, {a['launch_path_us']:.1f} µs to issue {a['launches']:g} launches, "
             f"{a['runtime_us']:.1f} µs of it in the CUDA runtime")
    if a.get("cudagraphs"):
        return (f"GPU idle {a['idle_pct']:.0f}% of the iteration even with CUDA graphs ({split}): what is left on the "
                "CPU is Python, Dynamo's guards and the graph replay's bookkeeping")
    return (f"GPU idle {a['idle_pct']:.0f}% of the iteration ({split}): the CPU launch path dominates; "
            "reduce-overhead (CUDA graphs) targets that")


TIMING: dict[str, Callable[[Args], str]] = {
    "busy-machine": _busy_machine,
    "busy-host": _busy_host,
    "pinned": _pinned,
    # a flagged sample or process (LatencyStats.outliers), as a finding of the mode ("text": a /3 result's sentence)
    "latency-outliers": lambda a: f"latency outliers: {a['text'] if 'text' in a else say(note_from(a.get('outlier')))}",
    "outlier-samples": lambda a: ((f"process {a['process']}: " if a.get("process") is not None else "")
                                  + f"{a['outliers']} of {a['samples']} samples are outliers (worst "
                                    f"{a['worst']:.3g}x that process's median)"),
    "outlier-process": lambda a: (f"process {a['process']} measured {a['ratio']:.3g}x the median of processes"
                                  + ("; left out of the interval's spread" if a.get("left_out") else "")),
    "timed-in-fewer-processes": lambda a: (f"timed in {a['ran']} of {a['of']} processes: the run was interrupted "
                                           f"({a.get('why')})"),
    "malformed-events-skipped": lambda a: f"{a['events']} malformed trace events were skipped",
    "process-measured-nothing": lambda a: (f"process {a['process']} of {a['of']} measured nothing ({a.get('status')}: "
                                           f"{a.get('error')}); the latency is over the other processes"),
    "still-drifted": lambda a: (f"latency still drifted inside process(es) {', '.join(str(p) for p in a['processes'])} "
                                "after the timed windows"),
    "timed-in-processes": _timed_in_processes,
    "profiled-kernels-slower": lambda a: (f"the profiled iterations' kernels alone took {a['profiled'] * 1000:.1f} µs "
                                          f"per iteration, more than {_steady(a)}: the kernels ran slower while "
                                          "profiled (clocks, another process on the GPU); the kernel times in this "
                                          "report overstate the steady state"),
    "profiled-slower": lambda a: (f"the profiled iterations took {a['profiled'] * 1000:.1f} µs each against "
                                  f"{_steady(a)}: the profiler's own CPU overhead and the synchronize after each "
                                  "profiled step add to it, so the trace overstates the CPU side; the steady median "
                                  "is the latency"),
    "profiled-faster": lambda a: (f"the profiled iterations took {a['profiled'] * 1000:.1f} µs each, less than "
                                  f"{_steady(a)}: the timed calls met something the profiled ones did not (another "
                                  "process, clocks, a cache state); treat the steady median with care"),
    "gpu-idle": _gpu_idle,
    "trace-analysis-failed": lambda a: f"trace analysis failed: {a.get('error')}",
    # a mode run under torchrun: whose figures the mode's are, and the ranks that ran differently
    "slowest-rank": lambda a: (f"{a['ranks']} ranks: headline figures are rank {a['slowest']}'s (the slowest); skew "
                               f"slowest/fastest {a['skew']:.2f}x (rank {a['slowest']} vs rank {a['fastest']})"),
    "ranks-differ": lambda a: (f"ranks whose kernels or GEMM verdicts differ from rank {a['from']}: "
                               + ", ".join(f"{r} ({' and '.join(how)})" for r, how in a["ranks"])),
    # a compile-time benchmark that decided GEMMs by a margin inside its noise ("why": its note; a /3 result's
    # sentence)
    "compile-may-differ": lambda a: (f"GEMM{'s' if len(a['gemms']) > 1 else ''} {_names(a['gemms'])}: "
                                     f"{say(note_from(a.get('why')))}"),
    "autotune-marginal": autotune_marginal_words,
    "fusion-benchmark-marginal": lambda a: f"fusion benchmark marginal: {fusion_benchmark_words(a)}",
    # why a max-autotune mode failed, in the backends' terms
    "nvgemm-no-choice": lambda a: (f"max_autotune_gemm_backends=NVGEMM offered no choice{_for(a.get('targets'))} on "
                                   f"sm{str(a.get('capability', '')).replace('.', '')}: {a.get('fact')} (seen: "
                                   f"{a.get('seen')}); add ATEN or TRITON to the backends to compile it"),
    "no-backend-choice": lambda a: (f"no backend in max_autotune_gemm_backends="
                                    f"{','.join(a.get('backends') or ()) or '?'} offered a choice"
                                    f"{_for(a.get('targets'))}: add ATEN to the backends so that at least one choice "
                                    "exists"),
}


# ------------------------------------------------------------------------------------------------ iterations
def _inferred(a: Args) -> str:
    text = (f"{a['iterations']} iterations inferred from {a['period']} repeating top-level op(s) per iteration "
            f"({a['first']!r} first)")
    return text + ("; if one iteration runs the same ops several times, pass --iterations N" if a.get("ambiguous")
                   else "")


ITERATIONS: dict[str, Callable[[Args], str]] = {
    "iterations-from-steps": lambda a: "iterations from ProfilerStep#N markers",
    "iterations-given": lambda a: (f"--iterations {a['iterations']}: "
                                   + (f"{a['per']} top-level ops each" if a.get("per") is not None
                                      else "split by launch order")),
    "iterations-whole-trace": lambda a: "no CPU ops in the trace: the whole trace is one iteration",
    "iterations-inferred": _inferred,
    "kernel-counts-differ": lambda a: f"kernel counts differ between iterations {list(a['counts'])}",
    "kernels-differ": lambda a: "iterations launched different kernels (the same count, other names)",
}


# ------------------------------------------------------------------------------------------------ autotune tables
AUTOTUNE: dict[str, Callable[[Args], str]] = {
    "autotune-truncated": lambda a: (f"Inductor printed the fastest {a['shown']} of {a['of']} choices"
                                     + (f" ({', '.join(a['absent'])} not among them)" if a.get("absent") else "")),
    "autotune-no-choice": lambda a: (f"no {', '.join(a['backends'])} choice in this table: that backend offered or "
                                     "compiled none for this GEMM"),
    "autotune-template-ran": lambda a: (f"{a['winner']} won this table, but a Triton template ran: Inductor's "
                                        "epilogue-fusion benchmark kept the template with its epilogue fused in"),
    "autotune-library-ran": lambda a: f"{a['winner']} won this table, but the library GEMM ran ({a['backend']})",
    "autotune-fusion-decided": lambda a: (f"{a['winner_backend']} won this table by only {a['margin']:.1%}, but the "
                                          "epilogue-fusion benchmark decided what ran"),
    "autotune-table-marginal": lambda a: (f"marginal: {a['winner_backend']} won by {a['margin']:.1%} over "
                                          f"{a['runner_up_backend']} {a['runner_up']}, inside autotune's "
                                          f"~{a['noise']:.0%} timing noise: another run may pick "
                                          f"{a['runner_up_backend']}"),
}


def autotune_summary(r: AutotuneResult) -> str:
    """"C++ 16.2 ms won over ATen 30.2 ms (2 choices)": one max-autotune table in a line."""
    others = [f"{b} {t:.4g} ms" for b, t in r.best_by_backend.items() if b != r.winner_backend and t is not None]
    win = next((c for c in r.choices if c.name == r.winner), None)
    head = f"{r.winner_backend} {r.winner}" + (f" {win.time_ms:.4g} ms" if win and win.time_ms is not None else "")
    text = f"{head} won" + (f" over {', '.join(others)}" if others else "")
    n = r.n_choices or len(r.choices)
    text += f" ({n} choice{'s' if n != 1 else ''})"
    if r.margin is not None:
        text += f"; margin {r.margin:.1%} over {r.runner_up_backend}" + (" (marginal)" if r.marginal else "")
    if r.missing_backends:
        text += f"; no {', '.join(r.missing_backends)} choice"
    if len(r.gemms) > 1:
        text += f"; one table for {len(r.gemms)} GEMMs of this selection key ({', '.join(r.gemms)})"
    return text


# ------------------------------------------------------------------------------------------------ GEMM coverage
def _decomposed(d: Any) -> str:
    return f" ({', '.join(f'{n} from decomposing {op}' for op, n in d.items())})" if d else ""


def _count_head(a: Args) -> str:
    """"10 GEMM-class ops (4 from decomposing multi_head_attention_forward) against eager's 10"."""
    return (f"{a['ops']} GEMM-class ops{_decomposed(a.get('decomposed'))} against eager's {a['eager_ops']}"
            f"{_decomposed(a.get('eager_decomposed'))}")


def _kinds(d: Any) -> str:
    return ", ".join(f"{k} {n}" for k, n in d.items()) or "none"


def _count_as_eager(a: Args) -> str:
    if (a.get("decomposed") or {}) == (a.get("eager_decomposed") or {}):
        return f"{a['ops']} GEMM-class ops, as in eager"
    return f"{_count_head(a)}: the same count"


# What counted a GEMM the analysis did not find (GemmOp.reason "not-found": by).
_ORACLE_BY = {"tl.dot": "the output code runs a kernel whose body calls tl.dot here",
              "template": "the output code runs a GEMM template here",
              "extern call": "the output code calls a GEMM library here",
              "dispatch": "the dispatch count saw it dispatched"}


def _not_found(a: Args) -> str:
    inside = f" inside {a['inside']}" if a.get("inside") else ""
    return f"{_ORACLE_BY.get(a.get('by', ''), 'the coverage oracle counted it')}{inside}, and no GEMM was found for it"


COVERAGE: dict[str, Callable[[Args], str]] = {
    # why a GEMM-class op was attributed to no kernel (GemmOp.reason)
    "launched-no-kernel": lambda a: "launched no kernel in the trace",
    "not-found": _not_found,
    "launched-only": lambda a: f"launched only {', '.join(a['kernels'])}, none of which computes a GEMM",
    "launch-not-found": lambda a: "its launch was not found among the trace's kernels",
    "gemm-count-as-eager": _count_as_eager,
    "gemm-count-explained": lambda a: f"{_count_head(a)}: the difference is decomposition",
    "gemm-count-unexplained": lambda a: (f"{_count_head(a)}: {a['beyond']} "
                                         f"{'more' if a['ops'] > a['eager_ops'] else 'fewer'} than decomposition "
                                         f"explains (eager: {_kinds(a.get('eager_kinds') or {})}; this mode: "
                                         f"{_kinds(a.get('kinds') or {})}); a GEMM may be missing from one of them, "
                                         "or the modes ran different code"),
}


# ------------------------------------------------------------------------------------------------ device peaks
PEAKS: dict[str, Callable[[Args], str]] = {
    "measured-below-datasheet": lambda a: (f"this workplace measured ~{a['tflops']} TFLOP/s {a['dtype']} on random "
                                           f"data and ~{a['copy_tbps']} TB/s device-to-device copy on an {a['gpu']}: "
                                           "run kernelscope calibrate for this machine's own ceilings"),
}


# ------------------------------------------------------------------------------------------------ two runs
def _sides(a: Args) -> str:
    sides = a["sides"]
    return (f"{' and '.join(sides)} timed each mode in one process: {'their' if len(sides) > 1 else 'its'} intervals "
            "cover the noise inside a process only, and separate runs differ by more (rerun with --processes 5)")


def _busy_machine_sides(a: Args) -> str:
    busy = [f"{side}'s {mode}" for side, mode in a["timings"]]
    return (f"{', '.join(busy)} {_were(busy)} timed on a busy machine (other processes left the timed threads short "
            "of CPUs): such a latency measures the load as much as the model, so a change there is not the code's "
            "until a rerun on an idle machine agrees")


def _busy_host_sides(a: Args) -> str:
    by_side: dict[str, list[str]] = {}
    for side, mode in a["timings"]:
        by_side.setdefault(side, []).append(mode)
    hosts = [f"{side}'s {' and '.join(names)}" for side, names in by_side.items()]
    many = len(hosts) > 1 or len(a["timings"]) > 1
    return (f"{' and '.join(hosts)} {'were' if many else 'was'} timed on a busy host (the hypervisor ran other guests "
            f"on the VM's CPUs) and the other run's on a quiet one: {HOST_SLOWDOWN}, so a change there is the host's "
            "as much as the code's until runs on a host in the same state agree")


def _compiled_differently(a: Args) -> str:
    parts = []
    if a.get("kernels"):
        more = ", ..." if a["kernels"] > 3 else ""
        parts.append(f"{a['kernels']} kernel(s) launched by one run only ({', '.join(a['first'])}{more})")
    if a.get("gemms"):
        parts.append(f"{a['gemms']} GEMM verdict(s) or backend(s) changed")
    return ("compiled differently from the same model file, versions and settings: " + " and ".join(parts)
            + ". Inductor's compile-time benchmarks (autotune, the epilogue-fusion benchmark, pad_mm) chose "
              "differently in the two runs, so a latency change here is those choices', not a change in the code")


COMPARE: dict[str, Callable[[Args], str]] = {
    "timed-in-one-process": _sides,
    "busy-machine-sides": _busy_machine_sides,
    "busy-host-sides": _busy_host_sides,
    "compiled-differently": _compiled_differently,
    "pad-kernels-differ": lambda a: (f"{a['kernels']} pad kernel(s) differ ({', '.join(a['first'])}): Inductor's "
                                     "pad_mm decides at compile time, by benchmarking, whether to pad a GEMM; the "
                                     "decision may differ between runs"),
}


# What an upgrade made worse (analysis/upgrade.py UpgradeMode.regressions), as the verdict line names it.
UPGRADE: dict[str, Callable[[Args], str]] = {
    "regressed-new-failure": lambda a: "new failure",
    "regressed-slower": lambda a: "slower" + {"machine": " (timed on a busy machine)",
                                              "host": " (timed on a busy host)"}.get(a.get("busy") or "", ""),
    "regressed-numerics": lambda a: "numerics",
    "regressed-fusion-lost": lambda a: "fusion lost",
    "regressed-fusion-lost-on-rank": lambda a: f"fusion lost on rank {a['rank']}",
}


def field_change(name: str, base: str, head: str) -> str:
    """"torch: 2.11.0 → 2.14.1"."""
    return f"{name}: {base} → {head}"


def comparable_headline(c: Comparable) -> str:
    """Whether two runs compare, said first in every compare output: the same everything, the differences, or
    what makes them not comparable; then the warnings."""
    if c.ok and not c.differences:
        text = "comparable: same device, dtype, model file, shapes, versions and settings"
    elif c.ok:
        text = "comparable, with differences: " + "; ".join(field_change(*d) for d in c.differences)
    else:
        text = ("NOT comparable" + (" (compared anyway, --force)" if c.forced else "") + ": "
                + "; ".join(field_change(*d) for d in c.refused))
    return text + "".join(f". {say(w)}" for w in c.warnings)


# ------------------------------------------------------------------------------------------------ the CI gate
def slowdown_limit(limit: float) -> str:
    """A limit on a latency ratio new / old, read one way: 1.5 -> "allowed at most 1.50× slower", 0.9 -> "required
    at least 1.11× faster" (a limit below 1 asks for a speedup)."""
    return f"allowed at most {fmt.change(limit)}" if limit >= 1 else f"required at least {fmt.change(limit)}"


def _speedup_limit(limit: float) -> str:
    # --min-speedup 0.8 allows a slowdown: "may be at most 1.25× slower", never "a speedup of at least 0.800×".
    return f"needs a speedup of at least {fmt.ratio(limit)}" if limit >= 1 else f"may be at most {fmt.speedup(limit)}"


def _load(a: Args) -> str:
    """Why a latency violation may be the machine's: the modes timed on a busy machine, on a busy host."""
    out = ""
    if a.get("busy"):
        out += (f"; {' and '.join(a['busy'])} timed on a busy machine (other processes left its threads short of "
                "CPUs): rerun on an idle machine before reading this as the code's")
    if a.get("host"):
        busy, quiet = a["host"]
        out += (f"; {busy} timed on a busy host and {quiet} on a quiet one ({HOST_CAVEAT}): rerun before reading this "
                "as the code's")
    return out


def _side_load(a: Args) -> str:
    """Why an upgrade's slowdown may be the machine's: the sides ("before", "after") timed on a busy machine, on
    a busy host while the other side's was quiet."""
    out = ""
    if a.get("busy"):
        out += (f"; {' and '.join(a['busy'])} timed on a busy machine (other processes left the timed threads short "
                "of CPUs): rerun on an idle machine before reading this as the upgrade's")
    if a.get("host"):
        out += (f"; {' and '.join(a['host'])} timed on a busy host and the other side on a quiet one "
                f"({HOST_CAVEAT}): rerun before reading this as the upgrade's")
    return out


def _against_eager(a: Args, ci: str) -> str:
    return f" than eager ({fmt.ms(a.get('mode_ms'))} vs {fmt.ms(a.get('eager_ms'))}" + (f", 95% CI {ci}" if ci else "")


def _slower_than_allowed(a: Args) -> str:
    ci = fmt.change_interval(a["low"], a["high"]) if a.get("low") is not None else ""
    return f"{fmt.change(a['ratio'])}{_against_eager(a, ci)}), {slowdown_limit(a['limit'])}{_load(a)}"


def _speedup_below(a: Args) -> str:
    ci = fmt.speedup_interval(a["low"], a["high"], a["speedup"]) if a.get("low") is not None else ""
    return f"{fmt.speedup(a['speedup'])}{_against_eager(a, ci)}), {_speedup_limit(a['limit'])}{_load(a)}"


def _unused_setting(a: Args) -> str:
    ci = fmt.speedup_interval(a["low"], a["high"])
    return (f"GEMM group {a['group']}: {a['candidate']} fused {_listed(a['ops'])} and ran the whole model "
            f"{fmt.speedup(a['ratio'])} (95% CI {ci}); the model does not use it: {compile_line(a['options'])}")


def _why_unattributed(reason: Any) -> str:
    """A GemmOp's reason (its Note's JSON; a sentence in an older result), in words."""
    return say(note_from(reason)) if reason else "not attributed"


def _coverage_incomplete(a: Args) -> str:
    missing = "; ".join(f"{op}{' ' + module if module else ''} ({_why_unattributed(reason)})"
                        for op, module, reason in a["missing"])
    more = f"; and {a['more']} more" if a.get("more") else ""
    return f"{a['attributed']} of {a['ops']} GEMM-class ops attributed to a kernel; not attributed: {missing}{more}"


CHECK: dict[str, Callable[[Args], str]] = {
    "no-gemm-verdict": lambda a: (f"{a['kernels']:g} GEMM-class kernel(s) per iteration ran but no GEMM verdict was "
                                  "derived: nothing to check, so nothing passes (pass the output code and the trace "
                                  "of the run)"),
    "expected-fused": lambda a: (f"GEMM {a['gemm']} is {a['verdict']}, expected fused"
                                 + (f"; unfused: {', '.join(a['unfused'])}" if a.get("unfused") else "")),
    "expected-no-fusion": lambda a: f"GEMM {a['gemm']} fused {', '.join(a['fused'])}, expected no epilogue fusion",
    "does-not-fuse": lambda a: (f"GEMM {a['gemm']} does not fuse {', '.join(a['missing'])} (fused: "
                                f"{', '.join(a['fused']) or 'nothing'})"),
    "pattern-matches-nothing": lambda a: f"no GEMM epilogue op matches {a['pattern']!r}",
    "no-compiled-mode": lambda a: "the result has no compiled mode to check",
    "unavailable-skipped": lambda a: (f"{a['mode']}: unavailable on that machine, skipped "
                                      f"({a.get('error') or 'no reason given'})"),
    "latency-of-slowest-rank": lambda a: (f"{a['mode']}: {a['ranks']} ranks; the latency rules use the slowest rank's "
                                          f"figures (rank {a['slowest']})"),
    "did-not-run-checked": lambda a: f"status {a['status']}" + (f": {a['error']}" if a.get("error") else ""),
    "kernels-not-measured": lambda a: "kernels per iteration not measured",
    "too-many-kernels": lambda a: f"{fmt.count(a['kernels'])} kernels per iteration > {fmt.count(a['limit'])}",
    "fails-vs-eager": lambda a: (f"output vs eager fails: {a.get('reason') or 'outside tolerance'}"
                                 + (f" (closer to {_reference(a)} than eager)" if a.get("closer") else "")),
    "fails-vs-reference": lambda a: f"output vs {_reference(a)} fails: {a.get('reason') or 'outside tolerance'}",
    "numerics-not-measured": lambda a: "numerics not measured" + (f" ({a['skipped']})" if a.get("skipped") else ""),
    "no-coverage-to-check": lambda a: f"status {a['status']}: no coverage to check",
    "coverage-not-derived": lambda a: ("GEMM coverage not derived (a result from before kernelscope reported it, or "
                                       "a compiled trace without its output code): profile again"),
    "coverage-incomplete": _coverage_incomplete,
    "no-eager-latency": lambda a: "no eager latency to compare with (run eager too)",
    "latency-not-measured": lambda a: "latency not measured",
    "slower-than-allowed": _slower_than_allowed,
    "speedup-below": _speedup_below,
    "rank-gemm-verdict": lambda a: f"GEMM {a['gemm']}: {a['verdict']}",
    # --max-regression on an upgrade-check directory
    "new-failure": lambda a: f"ran before, {a['status']} after: {a.get('error')}",
    "numerics-fail-after": lambda a: f"numerics fail after the upgrade ({say(note_from(a.get('reason')))})",
    "no-longer-fuses": lambda a: f"GEMM {a['gemm']} no longer fuses {', '.join(a['lost'])} ({a.get('backend')})",
    "rank-fused-less": lambda a: f"GEMM {a['change'].replace(' -> ', ' → ')} after the upgrade",
    # --advice
    "unused-setting-fuses-faster": _unused_setting,
    "slower-after-upgrade": lambda a: (f"{fmt.change(a['ratio'])} after the upgrade"
                                       + (f", 95% CI {fmt.change_interval(a['low'], a['high'])}"
                                          if a.get("low") is not None else "")
                                       + f", {slowdown_limit(a['limit'])}{_side_load(a)}"),
}


# ------------------------------------------------------------------------------------------------ fusion advice
def _listed(names: Any) -> str:
    return ", ".join(str(n) for n in names or ()) or "none"


def _over_budget(a: Args) -> str:
    return (f"the candidates had taken {a['spent_s']:g} s of --advise-budget {a['budget_s']:g} s, and a compiled "
            f"mode's first process took up to {a['estimate_s']:g} s in this run")


def _template_lost(a: Args) -> str:
    return (f"autotune timed the best template ({a.get('template')}) {a['margin']:.1%} slower than "
            f"{a.get('winner')} ({a['loss_us']:g} µs a call), more than the epilogue's own kernels cost "
            f"({a['gain_us']:g} µs): a fused template cannot win that back")


FUSION_ADVICE: dict[str, Callable[[Args], str]] = {
    # why no setting is proposed for a group (Advice.no_setting)
    "ends-in-reduction": lambda a: (f"{_listed(a['ops'])} ran inside {_listed(a['kernels'])}, the reduction that "
                                    "reads the GEMM's result: a reduction or norm ends the epilogue, no setting "
                                    "moves them into the GEMM, and the result crosses memory once either way"),
    "ends-in-next-gemm": lambda a: (f"{_listed(a['ops'])} ran in another GEMM's template ({_listed(a['kernels'])}), "
                                    "which reads this GEMM's result: a second GEMM ends the epilogue, and one of "
                                    "the two results crosses memory whatever the setting"),
    "no-known-setting": lambda a: (f"no setting is known to change what left it unfused ({_listed(a['reasons'])}); "
                                   "the why-not says what Inductor decided"),
    "why-not-from-an-older-result": lambda a: ("this result.json's why-not is a sentence of an older kernelscope, "
                                               "not a code: profile again for advice"),
    "no-template-choice": lambda a: (f"autotune offered no template choice beside {a.get('winner')}: without the "
                                     "library nothing would run the GEMM"),
    # why a candidate did not run, or how its mode failed (said after its verdict)
    "no-epilogue-operator": lambda a: (f"{a['backend']} has no epilogue-fusion-capable operator on {a['sm']} (those "
                                       "target SM100)"),
    "template-lost-more": _template_lost,
    "over-budget": _over_budget,
    "run-stopped": lambda a: "the run was stopped first",
    "candidate-not-run": lambda a: "its mode is not in this run",
    "candidate-failed": lambda a: a.get("error") or f"status {a['status']}",
}

# Advice.cause in a few words: the why-not reason (result.py WhyNotReason) or the evidence rule it follows from
ADVICE_CAUSES: dict[str, str] = {
    "eager-cpu": "eager: ATen runs each op on its own",
    "eager-library": "eager: the library GEMM takes no epilogue",
    "max-autotune-unknown": "a library GEMM ran (max-autotune not known)",
    "max-autotune-off": "max-autotune off: a library GEMM ran",
    "autotune-picked": "autotune picked the library GEMM",
    "autotune-ranked-template": "the library GEMM ran although autotune ranked a template first",
    "no-fusible-backend": "no requested backend takes an epilogue",
    "library-gemm": "the autotuner picked the library GEMM",
    "nvgemm-no-epilogue-operator": "NVGEMM has no epilogue operator for this GPU",
    "nvgemm-no-epilogue": "NVGEMM ran without an epilogue",
    "cutlass-no-epilogue": "CUTLASS ran without its epilogue fusion",
    "separate-kernel": "the template's epilogue ran in kernels of its own",
    "fusion-benchmark-rejected": "the epilogue-fusion benchmark rejected the fusion",
    "fusion-benchmark-no-config": "no fused configuration ran in the epilogue-fusion benchmark",
    "fusion-benchmark-marginal": "the epilogue-fusion benchmark decided within its noise",
    "in-next-gemm": "the next GEMM's template computes it",
    "dataflow.in-next-template": "the next GEMM's template computes it",
    "dataflow.in-next-prologue": "the next GEMM's template computes it",
    "dataflow.stop-reduction": "a reduction reads the result",
    "dataflow.stop-statistics": "a norm's statistics read the result",
    "dataflow.stop-pooling": "a pooling window reads the result",
    "dataflow.norm-feeder": "it feeds a norm",
    "eager-sequence.norm-feeder": "it feeds a norm",
}

ADVICE_VERDICTS: dict[str, str] = {
    "not-run": "not run", "failed": "failed", "not-fused": "did not fuse", "numerics-fail": "fused, numerics fail",
    "no-latency": "fused, no latency", "faster": "fused, faster", "within-noise": "fused, within noise",
    "slower": "fused, slower",
}

ADVICE_SETTINGS: dict[str, str] = {
    "template": "a GEMM template that takes epilogues", "without-library": "autotune without the library GEMM",
    "no-fusion-benchmark": "the epilogue-fusion benchmark off", "compiled": "a compiled mode of this run",
}


def advice_cause(code: str) -> str:
    return ADVICE_CAUSES.get(code, code)


def _py(v: Any) -> str:
    """A value as Python source (True, 3, "CPP")."""
    return f'"{v}"' if isinstance(v, str) else repr(v)


def compile_line(options: Mapping[str, Any]) -> str:
    """The line a user copies: ``torch.compile(model, options={...})`` (torch.compile takes a mode or options, not
    both, so a mode's own options are written out)."""
    if not options:
        return "torch.compile(model)"
    return "torch.compile(model, options={" + ", ".join(f'"{k}": {_py(v)}' for k, v in options.items()) + "})"


def recommendation_text(rec: Recommendation) -> str:
    """Why a recommendation names its mode (or none), as one sentence."""
    return say_all(rec.reasons)

WORDS: dict[str, Callable[[Args], str]] = {
    "text": lambda a: str(a.get("text", "")),
    **RULES, **NUMERICS, **ADVICE, **RECOMMEND, **TIMING, **ITERATIONS, **AUTOTUNE, **COVERAGE, **PEAKS, **COMPARE,
    **UPGRADE, **CHECK, **FUSION_ADVICE,
}


def say(note: Note) -> str:
    """One Note in words."""
    words = WORDS.get(note.code)
    if words is None:
        return note.code + (f" ({', '.join(f'{k} {v}' for k, v in note.args.items())})" if note.args else "")
    return words(note.args)


def say_all(notes: Iterable[Note], sep: str = "; ") -> str:
    return sep.join(say(n) for n in notes)


# ------------------------------------------------------------------------------------------------ speedups
def speedup_text(sp: Speedup) -> str:
    """Read one way: "1.12× faster" / "1.12× slower" (never "0.891× slower"); "baseline" for eager."""
    return "baseline" if sp.call == "baseline" else fmt.speedup(sp.value)


def speedup_interval_text(sp: Speedup) -> str:
    return fmt.speedup_interval(sp.low, sp.high, sp.value)
