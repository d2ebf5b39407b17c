"""kernelscope analyze vs HolisticTraceAnalysis on large traces: time, peak memory, and how both grow.

For each size, a trace is built from a real H200 fixture (gen_large_trace.py) and analysed, each measurement in a
fresh subprocess so that its peak RSS (os.wait4's rusage of that child) is its own:

- kernelscope: ``load_trace`` + ``analyze_kernels``, the analysis path of ``kernelscope analyze``;
- HTA: ``TraceAnalysis(trace_dir=...)`` + ``get_gpu_kernel_breakdown(visualize=False)`` (plots off: rendering is
  not analysis), with HTA's default parser.

Times are end to end (interpreter start, imports, parse, analysis). The machine may be shared, so CPU time is
printed beside wall time. Then: the per-size table, the speedup and memory ratios, a linear-growth check, and the
issue's targets at 1M events. HTA is the optional extra ``bench`` (pip install -e '.[bench]').

    python benchmarks/bench_analyze.py                      # 100k, 1M and 3M events, traces under /tmp
    python benchmarks/bench_analyze.py --sizes 100k,1M --json /tmp/bench.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen_large_trace import write_large_trace  # noqa: E402  (benchmarks/ is not a package)

TARGET_SPEEDUP = 10.0
TARGET_RSS_RATIO = 2.0
LINEAR_TOLERANCE = 1.25  # the marginal cost per event may grow this much from the small to the large sizes

# What each child runs. Both print one JSON line on stdout; the parent measures time and memory from outside.
KS_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from kernelscope.analysis.kernels import analyze_kernels
from kernelscope.trace import load_trace
t1 = time.perf_counter()
trace = load_trace(sys.argv[1])
t2 = time.perf_counter()
ka = analyze_kernels(trace)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "analyze_s": t3 - t2,
                  "torch_imported": "torch" in sys.modules, "total_events": trace.total_events,
                  "iterations": ka.iterations.count, "method": ka.iterations.method,
                  "consistent": ka.iterations.consistent, "kernels_per_iter": ka.kernels_per_iter,
                  "by_category": ka.by_category, "kernels": sorted(s.name for s in ka.stats)}))
"""
# The whole CLI (GEMM verdicts and report files included), for information: beyond the analysis path.
CLI_CHILD = """
import shutil, sys, tempfile
from kernelscope.cli import main
out = tempfile.mkdtemp(prefix="ks-bench-cli-")
sys.argv = ["kernelscope", "analyze", sys.argv[1], "--out", out, "--force"]
try:
    main()
except SystemExit as exc:
    if exc.code:
        raise
finally:
    shutil.rmtree(out, ignore_errors=True)
print('{}')
"""
HTA_CHILD = """
import json, logging, sys, time
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
    ks: list[Run] = field(default_factory=list)
    ks_gz: list[Run] = field(default_factory=list)
    gz_file_mb: float | None = None
    hta: list[Run] = field(default_factory=list)
    hta_error: str | None = None
    cli: list[Run] = field(default_factory=list)

    @staticmethod
    def median(runs: list[Run], attr: str) -> float | None:
        return statistics.median(getattr(r, attr) for r in runs) if runs else None


def parse_size(s: str) -> tuple[str, int]:
    s = s.strip()
    mult = {"k": 1_000, "m": 1_000_000}.get(s[-1].lower(), 1)
    return s, int(float(s[:-1] if mult > 1 else s) * mult)


def measure(code: str, arg: str) -> Run:
    """Run ``code`` in a fresh interpreter; wall time from outside, CPU time and peak RSS from its rusage."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code, arg], stdout=out, stderr=err, cwd=tempfile.gettempdir())
        # wait4 reports this child's own peak, which RUSAGE_CHILDREN (the max over all children) would not.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}): {stderr[-2000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, json.loads(stdout.strip().splitlines()[-1]))


def prepare(fixture: str, label: str, events: int, workdir: Path, gz: bool) -> tuple[Path, Path | None]:
    """Write (or reuse) <workdir>/<fixture>-<label>/rank0.trace.json: HTA wants one directory per trace."""
    plain = workdir / f"{fixture}-{label}" / "rank0.trace.json"
    stamp = workdir / f"{fixture}-{label}.generated.json"  # outside the directory: HTA reads every .json there
    want = {"fixture": fixture, "events": events}
    if not (plain.exists() and stamp.exists() and json.loads(stamp.read_text())["asked"] == want):
        t = time.perf_counter()
        w = write_large_trace(fixture, events, plain, gz=False)
        stamp.write_text(json.dumps({"asked": want, "written": w.events}))
        print(f"  generated {plain} ({w.events} events) in {time.perf_counter() - t:.1f} s", flush=True)
    gz_path = None
    if gz:
        # Outside the HTA directory: HTA would read both files as two ranks.
        gz_path = workdir / f"{fixture}-{label}.trace.json.gz"
        gz_stamp = workdir / f"{fixture}-{label}.gz.json"
        if not (gz_path.exists() and gz_stamp.exists() and json.loads(gz_stamp.read_text()) == want):
            write_large_trace(fixture, events, gz_path, gz=True)
            gz_stamp.write_text(json.dumps(want))
    return plain, gz_path


def machine() -> dict[str, str]:
    info = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        info["cpu"] = next((ln.split(":", 1)[1].strip() for ln in lscpu.splitlines() if ln.startswith("Model name")), "?")
    except OSError:
        info["cpu"] = platform.processor() or "?"
    info["cores"] = str(os.cpu_count())
    try:
        mem_kb = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal"))
        info["memory"] = f"{mem_kb / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        pass
    from importlib.metadata import PackageNotFoundError, version

    for pkg in ("kernelscope", "msgspec", "orjson", "HolisticTraceAnalysis", "pandas", "numpy"):
        try:
            info[pkg] = version(pkg)
        except PackageNotFoundError:
            info[pkg] = "not installed"
    return info


def fmt(v: float | None, spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def report(rows: list[Row], info: dict[str, str]) -> list[str]:
    """The per-size table and the checks, as Markdown lines (printed, and pasted into RESULTS.md)."""
    lines = [
        "| events | file MB | ks s | ks CPU s | HTA s | HTA CPU s | speedup (wall) | speedup (CPU) "
        "| ks peak RSS MB | ks RSS / file | HTA peak RSS MB | HTA RSS / file |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ks_w, ks_c, ks_m = Row.median(r.ks, "wall_s"), Row.median(r.ks, "cpu_s"), Row.median(r.ks, "peak_rss_mb")
        h_w, h_c, h_m = Row.median(r.hta, "wall_s"), Row.median(r.hta, "cpu_s"), Row.median(r.hta, "peak_rss_mb")
        lines.append(
            f"| {r.events:,} | {r.file_mb:.0f} | {fmt(ks_w)} | {fmt(ks_c)} | {fmt(h_w) if not r.hta_error else 'failed'} "
            f"| {fmt(h_c)} | {fmt(h_w / ks_w if h_w and ks_w else None, '.1f')}x "
            f"| {fmt(h_c / ks_c if h_c and ks_c else None, '.1f')}x | {fmt(ks_m, '.0f')} | {fmt(ks_m / r.file_mb)} "
            f"| {fmt(h_m, '.0f')} | {fmt(h_m / r.file_mb if h_m else None)} |"
        )
    gz_rows = [r for r in rows if r.ks_gz]
    if gz_rows:
        lines += ["", "| events | .json.gz MB | ks s (.json.gz) | ks CPU s | ks peak RSS MB | RSS / uncompressed |",
                  "|---:|---:|---:|---:|---:|---:|"]
        for r in gz_rows:
            m = Row.median(r.ks_gz, "peak_rss_mb")
            lines.append(f"| {r.events:,} | {r.gz_file_mb:.1f} | {fmt(Row.median(r.ks_gz, 'wall_s'))} "
                         f"| {fmt(Row.median(r.ks_gz, 'cpu_s'))} | {fmt(m, '.0f')} | {fmt(m / r.file_mb)} |")
    cli_rows = [r for r in rows if r.cli]
    if cli_rows:
        lines += ["", "| events | `kernelscope analyze` CLI s (reports included) | CPU s | peak RSS MB | RSS / file |"
                  " HTA s / CLI s |", "|---:|---:|---:|---:|---:|---:|"]
        for r in cli_rows:
            w, m, h = Row.median(r.cli, "wall_s"), Row.median(r.cli, "peak_rss_mb"), Row.median(r.hta, "wall_s")
            lines.append(f"| {r.events:,} | {w:.2f} | {fmt(Row.median(r.cli, 'cpu_s'))} | {m:.0f} | {m / r.file_mb:.2f} "
                         f"| {fmt(h / w if h else None, '.1f')}x |")
    lines.append("")
    # Linear growth: the cost of each extra event, between consecutive sizes (fixed start-up cost cancels out).
    pts = [(r.events, Row.median(r.ks, "wall_s"), Row.median(r.ks, "cpu_s")) for r in rows if r.ks]
    margins = []
    for (n0, w0, c0), (n1, w1, c1) in zip(pts, pts[1:]):
        margins.append(((c1 - c0) / (n1 - n0) * 1e6, (w1 - w0) / (n1 - n0) * 1e6, n0, n1))
        lines.append(f"- kernelscope, {n0:,} -> {n1:,} events: {margins[-1][0]:.2f} µs CPU "
                     f"({margins[-1][1]:.2f} µs wall) per extra event")
    if len(margins) >= 2:
        growth = margins[-1][0] / margins[0][0]
        verdict = "linear" if growth <= LINEAR_TOLERANCE else "NOT linear"
        lines.append(f"- marginal CPU cost per event, last segment / first: {growth:.2f} ({verdict}; "
                     f"tolerance {LINEAR_TOLERANCE})")
    one_m = next((r for r in rows if parse_size(r.label)[1] == 1_000_000), None)
    if one_m and one_m.ks:
        ks_w, ks_m = Row.median(one_m.ks, "wall_s"), Row.median(one_m.ks, "peak_rss_mb")
        ratio = ks_m / one_m.file_mb
        lines.append(f"- 1M events, peak RSS / file size: {ratio:.2f} "
                     f"({'met' if ratio <= TARGET_RSS_RATIO else 'NOT met'}: target <= {TARGET_RSS_RATIO})")
        if one_m.hta:
            sp = Row.median(one_m.hta, "wall_s") / ks_w
            spc = Row.median(one_m.hta, "cpu_s") / Row.median(one_m.ks, "cpu_s")
            lines.append(f"- 1M events, speedup over HTA: {sp:.1f}x wall, {spc:.1f}x CPU "
                         f"({'met' if sp >= TARGET_SPEEDUP else 'NOT met'}: target >= {TARGET_SPEEDUP:.0f}x)")
    for r in rows:
        if r.ks and r.hta:
            ks_names, hta_names = set(r.ks[0].out["kernels"]), set(r.hta[0].out["kernels"])
            same = "same kernels" if hta_names <= ks_names else f"HTA-only kernels {sorted(hta_names - ks_names)}"
            lines.append(f"- {r.label}: kernelscope {r.ks[0].out['kernels_per_iter']:g} kernels/iteration over "
                         f"{r.ks[0].out['iterations']:,} iterations ({r.ks[0].out['method']}); HTA and kernelscope "
                         f"list the {same}")
        if r.hta_error:
            lines.append(f"- {r.label}: HTA failed: {r.hta_error}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", default="seed-default", help="fixture stem (see gen_large_trace.py)")
    ap.add_argument("--sizes", default="100k,1M,3M", help="comma-separated event counts (k/M suffixes)")
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "kernelscope-bench"),
                    help="where traces are written (kept for the next run; not in git)")
    ap.add_argument("--repeats", type=int, default=3, help="kernelscope runs per size (the median is shown)")
    ap.add_argument("--hta-repeats", type=int, default=1, help="HTA runs per size (each takes minutes at 3M)")
    ap.add_argument("--no-hta", action="store_true", help="time kernelscope only")
    ap.add_argument("--gzip", action="store_true", help="also time kernelscope on a .json.gz of each trace")
    ap.add_argument("--cli", action="store_true",
                    help="also time the whole `kernelscope analyze` command once per size (reports included)")
    ap.add_argument("--json", help="write the measurements and machine info to this file")
    ap.add_argument("--from-json", help="print the report of a run saved with --json, measuring nothing")
    a = ap.parse_args(argv)
    if a.from_json:
        saved = json.loads(Path(a.from_json).read_text())
        rows = [Row(**{**r, **{k: [Run(**x) for x in r[k]] for k in ("ks", "ks_gz", "hta", "cli")}})
                for r in saved["rows"]]
        print("machine: " + ", ".join(f"{k}={v}" for k, v in saved["machine"].items()))
        print("\n".join(report(rows, saved["machine"])))
        return 0

    info = machine()
    info["date"] = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    info["fixture"] = a.fixture
    print("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()), flush=True)
    workdir = Path(a.workdir)
    rows: list[Row] = []
    for label, events in map(parse_size, a.sizes.split(",")):
        print(f"== {label} events", flush=True)
        plain, gz = prepare(a.fixture, label, events, workdir, a.gzip)
        stamp = json.loads((workdir / f"{a.fixture}-{label}.generated.json").read_text())
        row = Row(label, stamp["written"], plain.stat().st_size / 1e6)
        for i in range(a.repeats):
            run = measure(KS_CHILD, str(plain))
            if run.out["torch_imported"]:
                raise SystemExit("kernelscope's analysis path imported torch")
            row.ks.append(run)
            print(f"  kernelscope #{i + 1}: {run.wall_s:.2f} s wall, {run.cpu_s:.2f} s CPU, "
                  f"{run.peak_rss_mb:.0f} MB peak (load {run.out['load_s']:.2f} s, analyze {run.out['analyze_s']:.2f} s)",
                  flush=True)
        if gz is not None:
            row.gz_file_mb = gz.stat().st_size / 1e6
            for _ in range(a.repeats):
                row.ks_gz.append(measure(KS_CHILD, str(gz)))
            print(f"  kernelscope .json.gz: {Row.median(row.ks_gz, 'wall_s'):.2f} s wall", flush=True)
        if a.cli:
            run = measure(CLI_CHILD, str(plain))
            row.cli.append(run)
            print(f"  kernelscope analyze CLI: {run.wall_s:.2f} s wall, {run.cpu_s:.2f} s CPU, "
                  f"{run.peak_rss_mb:.0f} MB peak", flush=True)
        if not a.no_hta:
            for i in range(a.hta_repeats):
                try:
                    run = measure(HTA_CHILD, str(plain.parent))
                except RuntimeError as exc:
                    row.hta_error = str(exc).splitlines()[-1][:300]
                    print(f"  HTA failed: {row.hta_error}", flush=True)
                    break
                row.hta.append(run)
                print(f"  HTA #{i + 1}: {run.wall_s:.2f} s wall, {run.cpu_s:.2f} s CPU, {run.peak_rss_mb:.0f} MB peak "
                      f"(parse+load {run.out['load_s']:.2f} s, breakdown {run.out['analyze_s']:.2f} s)", flush=True)
        rows.append(row)
    print()
    print("\n".join(report(rows, info)))
    if a.json:
        Path(a.json).write_text(json.dumps({"machine": info, "rows": [asdict(r) for r in rows]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
