"""The zoo on a GPU: `kernelscope profile` of every model in a plan, and how many of the GEMM-class ops each mode ran
its GEMM verdicts attributed to a kernel. Runs on a CUDA GPU; needs the zoo's packages (pip install -e '.[zoo]').

    python benchmarks/zoo.py                                     # every entry of benchmarks/zoo_plan.json
    python benchmarks/zoo.py --parallel 5 --deadline 440 hf_llama tv_resnet50
    python benchmarks/zoo.py --pack "$OUT" linear_gelu mlp       # and pack the runs as test fixtures

The plan maps a name to {"model": path, "sets": [...], "modes": "eager,default", "dtype": "bfloat16" (null: the
model's own), "args": [...]}. Profiles are short (--processes 1 --repeats 10 --steps 2 --cpu-pinning off unless
"args" says otherwise) and --parallel of them share the GPU, so their latencies are no claims; kernels, output code
and verdicts are. Runs live in --work (default /tmp/kszoo): a finished entry is kept, and the same command
continues where a stopped one left off.

Prints per entry and mode the GEMM-class ops attributed to a kernel out of those the mode ran (result.json
``gemm_coverage``: eager counts the trace's CPU ops, a compiled mode its output code's GEMM call sites), then the
total and how many GEMMs got no verdict. --pack DIR writes each run's result.json, summary.md, terminal output,
capture.json, Inductor's output code and provenance, the gzipped compile logs and traces (40 MB of traces at most)
to DIR/zoo.tar.xz.partN (14 MiB parts).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRACE_BUDGET = 40_000_000
SHORT = ["--processes", "1", "--repeats", "10", "--steps", "2", "--timeout", "300", "--cpu-pinning", "off"]


def command(work: Path, name: str, e: dict) -> list[str]:
    dtype = e.get("dtype", "bfloat16")
    return [sys.executable, "-m", "kernelscope", "profile", e["model"], "--modes",
            e.get("modes", "eager,default,max-autotune"), *(["--dtype", dtype] if dtype else []),
            "--out", str(work / name), "--force", *(a for s in e.get("sets", []) for a in ("--set", s)),
            *e.get("args", SHORT)]


def profile_all(work: Path, plan: dict, names: list[str], parallel: int, deadline: float) -> None:
    """Run the entries not yet done, ``parallel`` at a time in the plan's order; past the deadline none starts,
    and one still running 60 s after it is stopped (and recorded as unfinished)."""
    t0 = time.time()
    todo = [n for n in names if not (work / f"{n}.done").exists()]
    running: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
    while todo or running:
        while todo and len(running) < parallel and time.time() - t0 < deadline:
            n = todo.pop(0)
            with open(work / f"{n}.log", "w") as log:
                running[n] = (subprocess.Popen(command(work, n, plan[n]), stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True, env={**os.environ, "COLUMNS": "120"}),
                              time.time())
            print(f"start {n} at {time.time() - t0:.0f} s", flush=True)
        if time.time() - t0 >= deadline:
            todo = []
        for n, (p, started) in list(running.items()):
            if p.poll() is None and time.time() - t0 > deadline + 60:
                os.killpg(p.pid, 9)
                p.wait()
            if p.poll() is not None:
                (work / f"{n}.done").write_text(json.dumps({"rc": p.returncode, "wall_s": time.time() - started}))
                print(f"done {n}: exit {p.returncode} after {time.time() - started:.0f} s", flush=True)
                del running[n]
        time.sleep(1)


def coverage(work: Path, names: list[str]) -> None:
    total_ops = total_attributed = unknown = 0
    for n in names:
        path = work / n / "result.json"
        if not path.exists():
            print(f"{n}: no result")
            continue
        parts = []
        for m in json.loads(path.read_text())["modes"]:
            cov = m.get("gemm_coverage")
            if not cov:
                parts.append(f"{m['name']} {m['status']}")
                continue
            total_ops, total_attributed = total_ops + cov["ops"], total_attributed + cov["attributed"]
            unknown += sum(g["verdict"] == "unknown" for g in m.get("gemms") or ())
            parts.append(f"{m['name']} {cov['attributed']}/{cov['ops']}")
        print(f"{n}: {', '.join(parts)}")
    if total_ops:
        print(f"GEMM-class ops attributed to a kernel: {total_attributed} of {total_ops} "
              f"({total_attributed / total_ops:.1%}); GEMMs without a verdict: {unknown}")


def pack(work: Path, out: Path) -> None:
    budget = [TRACE_BUDGET]

    def how(rel: Path, size: int) -> str | None:  # "plain", "gzip" or None
        if len(rel.parts) == 1:  # each entry's terminal output and exit
            return "plain"
        if rel.name.endswith(".pt.trace.json.gz"):
            budget[0] -= size
            return "plain" if budget[0] > 0 else None
        if rel.name.endswith(("result.json", "summary.md", "capture.json", "provenance.json")) or "code" in rel.parts:
            return "plain" if size < 3_000_000 else "gzip"
        return "gzip" if rel.name.endswith("log.txt") else None

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as t:
        for fp in sorted(p for p in work.rglob("*") if p.is_file()):
            rel = fp.relative_to(work)
            arc, kind = str(rel), how(rel, fp.stat().st_size)
            if kind == "plain":
                t.add(fp, arcname=arc)
            elif kind == "gzip":
                data = gzip.compress(fp.read_bytes())
                info = tarfile.TarInfo(arc + ".gz")
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    data, part = buf.getvalue(), 14 * 1024 * 1024
    out.mkdir(parents=True, exist_ok=True)
    for i in range(0, len(data), part):
        (out / f"zoo.tar.xz.part{i // part}").write_bytes(data[i:i + part])
    print(f"packed {len(data)} bytes into {out}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="plan entries (default: all)")
    ap.add_argument("--plan", default=str(HERE / "zoo_plan.json"))
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=float("inf"), help="seconds after which no profile starts")
    ap.add_argument("--work", default="/tmp/kszoo")
    ap.add_argument("--pack", default=None, metavar="DIR")
    a = ap.parse_args()
    plan = json.loads(Path(a.plan).read_text())
    names = a.names or list(plan)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    profile_all(work, plan, names, a.parallel, a.deadline)
    coverage(work, names)
    if a.pack:
        pack(work, Path(a.pack))


if __name__ == "__main__":
    main()
