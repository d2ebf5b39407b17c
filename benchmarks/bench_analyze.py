"""The whole `kernelscope analyze` command against its peers on large traces: time and peak memory, side by side.

For each size, a trace is built from a real H200 fixture (gen_large_trace.py; kept under --workdir for the next
run) and each tool runs on it in a fresh subprocess, so that its peak RSS (os.wait4's rusage of that child) is its
own:

- kernelscope: ``python -m kernelscope analyze TRACE --out DIR --force``, the command a user runs: load, every
  analysis pass, GEMM verdicts, result.json, report.html, summary.md and the terminal summary;
- HTA (HolisticTraceAnalysis, the optional extra ``bench``): ``TraceAnalysis(trace_dir=...)`` +
  ``get_gpu_kernel_breakdown(visualize=False)`` (plots off: rendering is not analysis), under a memory cap
  (RLIMIT_AS, --hta-mem-gb) and a time limit (--hta-timeout): what happened is recorded either way;
- Perfetto's trace_processor (the ``perfetto`` package): load the JSON trace and sum the kernels per name in SQL.
  It runs only where a trace_processor_shell binary is there (--perfetto-bin, $PERFETTO_TRACE_PROCESSOR, or one on
  PATH): the package would download one, and nothing is downloaded here. Without one the row says so.

Times are end to end (interpreter start, imports, parse, analysis, exit), wall and CPU (the machine may be shared).
kernelscope's children run with bytecode caching on (PYTHONDONTWRITEBYTECODE unset, after one warm-up run), as an
installed package runs; HTA and Perfetto are installed packages already.

    pip install -e '.[bench]'                                           # HTA (and psutil, which it imports)
    python benchmarks/bench_analyze.py                                  # 1M events: kernelscope, HTA, Perfetto
    python benchmarks/bench_analyze.py --sizes 10M --repeats 1 --hta-mem-gb 8 --json /tmp/bench-10m.json
    python benchmarks/bench_analyze.py --from-json /tmp/bench-10m.json  # print a saved run again
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from gen_large_trace import write_large_trace  # noqa: E402  (benchmarks/ is not a package)

TARGET_SPEEDUP = 10.0  # over HTA, wall time, at 1M events
TARGET_RSS_RATIO = 1.0  # peak RSS / trace file size

HTA_CHILD = """
import json, resource, sys, time
cap = int(sys.argv[2])
if cap:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
t1 = time.perf_counter()
analyzer = TraceAnalysis(trace_dir=sys.argv[1])
t2 = time.perf_counter()
by_type, by_kernel = analyzer.get_gpu_kernel_breakdown(visualize=False)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "analyze_s": t3 - t2,
                  "kernels": sorted(set(by_kernel["name"]))}))
"""
PERFETTO_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig
config = TraceProcessorConfig(bin_path=sys.argv[2] or None, load_timeout=int(sys.argv[3]))
t1 = time.perf_counter()
tp = TraceProcessor(trace=sys.argv[1], config=config)
t2 = time.perf_counter()
rows = tp.query("select name, count(*) as calls, sum(dur) as total from slice where category = 'kernel' "
                "group by name").as_pandas_dataframe()
t3 = time.perf_counter()
tp.close()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "analyze_s": t3 - t2,
                  "kernels": sorted(rows["name"])}))
"""


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    out: dict[str, Any]


@dataclass
class Row:
    label: str
    events: int
    file_mb: float
    runs: dict[str, list[Run]] = field(default_factory=dict)  # tool -> its runs
    errors: dict[str, str] = field(default_factory=dict)  # tool -> why it has no run

    def median(self, tool: str, attr: str) -> float | None:
        runs = self.runs.get(tool) or []
        return statistics.median(getattr(r, attr) for r in runs) if runs else None


TOOLS = ("kernelscope", "HTA", "Perfetto")


def parse_size(s: str) -> tuple[str, int]:
    s = s.strip()
    mult = {"k": 1_000, "m": 1_000_000}.get(s[-1].lower(), 1)
    return s, int(float(s[:-1] if mult > 1 else s) * mult)


class ChildFailed(RuntimeError):
    pass


def measure(cmd: list[str], *, env: dict[str, str] | None = None, timeout: float | None = None) -> Run:
    """Run ``cmd``; wall time from outside, CPU time and peak RSS from its rusage (its waited-for children
    included: Perfetto's trace_processor_shell)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=tempfile.gettempdir(), env=env)
        deadline = None if timeout is None else t + timeout
        while True:  # wait4 reports this child's own peak, which RUSAGE_CHILDREN (the max over all) would not
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG if deadline else 0)
            if pid:
                break
            if time.perf_counter() > deadline:  # type: ignore[operator]
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                raise ChildFailed(f"stopped after {timeout:.0f} s (time limit), peak RSS "
                                  f"{usage.ru_maxrss / 1024:.0f} MB")
            time.sleep(0.05)
        wall = time.perf_counter() - t
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if code != 0:
        last = [ln for ln in stderr.strip().splitlines() if ln.strip()][-1:] or [f"exit {code}"]
        why = re.sub(r"\S+://\S+", "<url>", last[0])[:300]  # no download host in a saved result
        raise ChildFailed(f"exit {code} after {wall:.0f} s, peak RSS {usage.ru_maxrss / 1024:.0f} MB: {why}")
    lines = stdout.strip().splitlines()
    try:
        out_json = json.loads(lines[-1]) if lines else {}
    except ValueError:
        out_json = {}
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out_json)


def kernelscope_env() -> dict[str, str]:
    """The environment of a user's install: bytecode cached, this checkout's kernelscope first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def run_kernelscope(trace: Path) -> Run:
    out = Path(tempfile.mkdtemp(prefix="ks-bench-"))
    try:
        run = measure([sys.executable, "-m", "kernelscope", "analyze", str(trace), "--out", str(out), "--force"],
                      env=kernelscope_env())
        result = json.loads((out / "result.json").read_text())
    finally:
        shutil.rmtree(out, ignore_errors=True)
    mode = result["modes"][0]
    run.out = {"kernels": sorted(k["name"] for k in mode["kernels"]), "kernels_per_iter": mode["kernels_per_iter"],
               "iterations": mode["iterations"]["count"], "method": mode["iterations"]["method"],
               "gemms": len(mode["gemms"])}
    return run


def prepare(fixture: str, label: str, events: int, workdir: Path) -> Path:
    """Write (or reuse) <workdir>/<fixture>-<label>/rank0.trace.json: HTA wants one directory per trace."""
    plain = workdir / f"{fixture}-{label}" / "rank0.trace.json"
    stamp = workdir / f"{fixture}-{label}.generated.json"  # outside the directory: HTA reads every .json there
    want = {"fixture": fixture, "events": events}
    if not (plain.exists() and stamp.exists() and json.loads(stamp.read_text())["asked"] == want):
        t = time.perf_counter()
        w = write_large_trace(fixture, events, plain, gz=False)
        stamp.write_text(json.dumps({"asked": want, "written": w.events}))
        print(f"  generated {plain} ({w.events} events) in {time.perf_counter() - t:.1f} s", flush=True)
    return plain


def machine() -> dict[str, str]:
    info = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next((ln.split(":", 1)[1].strip() for ln in cpuinfo.splitlines()
                            if ln.startswith("model name")), "?")
    except OSError:
        info["cpu"] = platform.processor() or "?"
    info["cores"] = str(os.cpu_count())
    try:
        mem_kb = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                      if ln.startswith("MemTotal"))
        info["memory"] = f"{mem_kb / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        pass
    info["load average"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    from importlib.metadata import PackageNotFoundError, version

    for pkg in ("kernelscope", "msgspec", "HolisticTraceAnalysis", "perfetto", "pandas", "numpy"):
        try:
            info[pkg] = version(pkg)
        except PackageNotFoundError:
            info[pkg] = "not installed"
    return info


def fmt(v: float | None, spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def report(rows: list[Row]) -> list[str]:
    """The per-size tables and the checks, as Markdown lines (printed, and pasted into benchmarks/README.md)."""
    lines: list[str] = []
    for r in rows:
        lines += [f"#### {r.events:,} events, {r.file_mb:,.0f} MB", "",
                  "| tool | wall s | CPU s | peak RSS MB | RSS / file | runs | kernelscope faster (wall) |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        ks_w = r.median("kernelscope", "wall_s")
        for tool in TOOLS:
            if tool in r.errors and not r.runs.get(tool):
                lines.append(f"| {tool} | - | - | - | - | 0 | {r.errors[tool]} |")
                continue
            w, c, m = r.median(tool, "wall_s"), r.median(tool, "cpu_s"), r.median(tool, "peak_rss_mb")
            if w is None:
                continue
            ratio = "" if tool == "kernelscope" else (f"{w / ks_w:.1f}x" if ks_w else "-")
            lines.append(f"| {tool} | {w:.2f} | {fmt(c)} | {fmt(m, '.0f')} | {fmt(m / r.file_mb if m else None)} "
                         f"| {len(r.runs[tool])} | {ratio} |")
        lines.append("")
        ks = r.runs.get("kernelscope") or []
        if ks:
            o = ks[0].out
            lines.append(f"- kernelscope: {o['kernels_per_iter']:g} kernels/iteration over {o['iterations']:,} "
                         f"iterations ({o['method']}), {o['gemms']} GEMM verdict(s)")
            m = r.median("kernelscope", "peak_rss_mb")
            ratio = m / r.file_mb if m else None
            if ratio is not None:
                lines.append(f"- kernelscope peak RSS / file: {ratio:.2f} "
                             f"({'met' if ratio <= TARGET_RSS_RATIO else 'NOT met'}: target <= {TARGET_RSS_RATIO})")
        for tool in TOOLS[1:]:
            runs = r.runs.get(tool) or []
            if ks and runs:
                sp = statistics.median(x.wall_s for x in runs) / ks_w if ks_w else None
                spc = r.median(tool, "cpu_s") / r.median("kernelscope", "cpu_s")  # type: ignore[operator]
                target = (f" ({'met' if sp and sp >= TARGET_SPEEDUP else 'NOT met'}: target >= "
                          f"{TARGET_SPEEDUP:.0f}x)" if tool == "HTA" else "")
                lines.append(f"- against {tool}: kernelscope {fmt(sp, '.1f')}x faster in wall time, {spc:.1f}x in "
                             f"CPU time{target}")
                ks_names, names = set(ks[0].out["kernels"]), set(runs[0].out.get("kernels", []))
                lines.append(f"- {tool} lists the same kernels" if names == ks_names else
                             f"- kernels only {tool} lists: {sorted(names - ks_names)}; only kernelscope: "
                             f"{sorted(ks_names - names)}")
            elif tool in r.errors:
                lines.append(f"- {tool}: {r.errors[tool]}")
        lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", default="seed-default", help="fixture stem (see gen_large_trace.py)")
    ap.add_argument("--sizes", default="1M", help="comma-separated event counts (k/M suffixes)")
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "kernelscope-bench"),
                    help="where traces are written (kept for the next run; not in git)")
    ap.add_argument("--repeats", type=int, default=3, help="kernelscope runs per size (the median is shown)")
    ap.add_argument("--peer-repeats", type=int, default=1, help="HTA and Perfetto runs per size")
    ap.add_argument("--no-hta", action="store_true", help="leave HTA out")
    ap.add_argument("--hta-mem-gb", type=float, default=0.0,
                    help="HTA's address-space cap in GiB (RLIMIT_AS; 0: none). On a shared machine, give one")
    ap.add_argument("--hta-timeout", type=float, default=1800.0, help="seconds before HTA is stopped")
    ap.add_argument("--no-perfetto", action="store_true", help="leave Perfetto's trace_processor out")
    ap.add_argument("--perfetto-bin", default=os.environ.get("PERFETTO_TRACE_PROCESSOR")
                    or shutil.which("trace_processor_shell") or shutil.which("trace_processor") or "",
                    help="a trace_processor_shell binary (default: $PERFETTO_TRACE_PROCESSOR, else one on PATH)")
    ap.add_argument("--json", help="write the measurements and machine info to this file")
    ap.add_argument("--from-json", help="print the report of a run saved with --json, measuring nothing")
    a = ap.parse_args(argv)
    if a.from_json:
        saved = json.loads(Path(a.from_json).read_text())
        rows = [Row(r["label"], r["events"], r["file_mb"], {t: [Run(**x) for x in runs] for t, runs in
                                                             r["runs"].items()}, r["errors"]) for r in saved["rows"]]
        print("machine: " + ", ".join(f"{k}={v}" for k, v in saved["machine"].items()))
        print("\n".join(report(rows)))
        return 0

    info = machine()
    info["date"] = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    info["fixture"] = a.fixture
    print("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()), flush=True)
    workdir = Path(a.workdir)
    rows: list[Row] = []
    for label, events in map(parse_size, a.sizes.split(",")):
        print(f"== {label} events", flush=True)
        plain = prepare(a.fixture, label, events, workdir)
        stamp = json.loads((workdir / f"{a.fixture}-{label}.generated.json").read_text())
        row = Row(label, stamp["written"], plain.stat().st_size / 1e6)
        rows.append(row)
        # one run first: imports written to bytecode, the file in the page cache for every tool alike
        run_kernelscope(plain)
        row.runs["kernelscope"] = []
        for i in range(a.repeats):
            run = run_kernelscope(plain)
            row.runs["kernelscope"].append(run)
            print(f"  kernelscope #{i + 1}: {run.wall_s:.2f} s wall, {run.cpu_s:.2f} s CPU, "
                  f"{run.peak_rss_mb:.0f} MB peak", flush=True)
        peers: list[tuple[str, list[str], float | None]] = []
        if not a.no_hta:
            cap = int(a.hta_mem_gb * 2**30)
            peers.append(("HTA", [sys.executable, "-c", HTA_CHILD, str(plain.parent), str(cap)], a.hta_timeout))
        if not a.no_perfetto and not a.perfetto_bin:
            row.errors["Perfetto"] = "no trace_processor_shell binary here (pass --perfetto-bin)"
        elif not a.no_perfetto:
            peers.append(("Perfetto", [sys.executable, "-c", PERFETTO_CHILD, str(plain), a.perfetto_bin,
                                       str(int(a.hta_timeout))], a.hta_timeout))
        for tool, cmd, timeout in peers:
            for i in range(a.peer_repeats):
                try:
                    run = measure(cmd, timeout=timeout)
                except ChildFailed as exc:
                    row.errors[tool] = str(exc)
                    print(f"  {tool} failed: {exc}", flush=True)
                    break
                row.runs.setdefault(tool, []).append(run)
                print(f"  {tool} #{i + 1}: {run.wall_s:.2f} s wall, {run.cpu_s:.2f} s CPU, {run.peak_rss_mb:.0f} MB "
                      f"peak (load {run.out.get('load_s', 0):.2f} s, analysis {run.out.get('analyze_s', 0):.2f} s)",
                      flush=True)
        if a.json:  # after each size: a long run that fails later keeps what it measured
            Path(a.json).write_text(json.dumps({"machine": info, "rows": [asdict(r) for r in rows]}, indent=1))
    print()
    print("\n".join(report(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
