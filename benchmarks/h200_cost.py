"""Issue 27 part 2 on one machine, in ONE device command: `kernelscope profile` at real size against the hand script
doing the same compiles and timings (benchmarks/hand_llama.py), one after the other, alone on the machine.

Prints both walls, the ratio (target: profile <= 1.25x the hand script) and kernelscope's stage times per worker
process (from its progress lines: "... eager: reference: ... (build took 0.4 s)"); writes cost.json (walls, stages,
each side's medians), both runs' output, the profile's summary.md and result.json.gz into $OUT (or --out-dir).
Both runs share a deadline (--deadline, default 560 s): a run still going then is stopped and reported unfinished,
with the stage times it reached. At 1b the pair needs about 560-600 s when profile meets its target (the hand
script alone took 246 s, 199 s of it max-autotune's compile): run the 1b comparison as two calls (--only hand, then
--only profile), or the 1b preset at 8 layers in one.

    python3 benchmarks/h200_cost.py                       # 1b Llama, 512 tokens, bfloat16, modes of profile
    python3 benchmarks/h200_cost.py --set layers=8        # the 1b preset at 8 layers, when 16 do not fit
    python3 benchmarks/h200_cost.py --only profile        # one side per call (two calls instead of one)
    python3 benchmarks/h200_cost.py --device cpu --set size=tiny --set seq_len=16 --modes eager,default  # dry run

Needs, checked before anything runs (one line and exit 2 when missing): torch with a GPU (unless --device cpu),
transformers, kernelscope's own dependencies (click, rich, jinja2, msgspec, orjson) and this checkout on
PYTHONPATH (or installed).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODEL = "tests/zoo/models/hf_llama.py"
SETS = ["size=1b", "seq_len=512"]
NEEDED = ("torch", "transformers", "click", "rich", "jinja2", "msgspec", "orjson", "kernelscope")


def preflight(a: argparse.Namespace) -> None:
    """Fail in seconds, not after the hand script's 4 minutes: packages, the model file, the GPU. Importing torch
    and transformers here also warms the page cache for both runs alike."""
    missing = [n for n in NEEDED if importlib.util.find_spec(n) is None]
    if missing:
        sys.exit(f"h200_cost: missing Python packages: {', '.join(missing)} (install them, and put this checkout "
                 f"on PYTHONPATH for kernelscope)")
    if not (ROOT / a.model).is_file():
        sys.exit(f"h200_cost: no model file {a.model} under {ROOT}")
    probe = ("import torch, transformers, kernelscope.cli; "
             "print(torch.__version__, transformers.__version__, torch.cuda.is_available())")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"h200_cost: importing torch, transformers and kernelscope failed: {proc.stderr.strip()[-500:]}")
    torch_v, tf_v, cuda = proc.stdout.split()[-3:]
    if a.device == "cuda" and cuda != "True":
        sys.exit("h200_cost: torch sees no GPU (pass --device cpu for a dry run)")
    print(f"torch {torch_v}, transformers {tf_v}, cuda {cuda}", flush=True)


def run(cmd: list[str], log: Path, deadline: float) -> tuple[float, int | None, list[tuple[float, str]]]:
    """Run cmd from the checkout's root, its output into log; (wall seconds, exit code or None if stopped at the
    deadline: the whole process group is killed, each output line with the second it arrived, from the start)."""
    t0 = time.perf_counter()
    stamped: list[tuple[float, str]] = []
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True, text=True, errors="replace",
                                env={**os.environ, "COLUMNS": "160"})

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                stamped.append((round(time.perf_counter() - t0, 2), line.rstrip("\n")))
                f.write(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            code: int | None = proc.wait(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        wall = time.perf_counter() - t0
        reader.join(timeout=10)
    return wall, code, stamped


_LINE = re.compile(r"^\S+ \S+ (\[[^\]]+\] [^:]+): (.*)$")
_TOOK = re.compile(r"\(([\w -]+) took (\d+h \d+m|\d+m \d+s|[\d.]+ s)\)$")
_FINISHED = re.compile(r"^finished in (\d+h \d+m|\d+m \d+s|[\d.]+ s)$")


_WRAPPER_TIMERS = frozenset({"_compile.compile_inner", "compile_attempt_0", "OutputGraph.call_user_compiler",
                             "create_aot_dispatcher_function", "compile_fx.<locals>.fw_compiler_base",
                             "compile_fx_inner", "fx_codegen_and_compile", "GraphLowering.compile_to_fn",
                             "GraphLowering.compile_to_module"})


def tail_times(stamped: list[tuple[float, str]], wall: float) -> dict:
    """Where profile's last seconds went, from its lines' arrival: the last worker's "finished in", each mode's
    line after it (the parent analysed that mode), the "report:" line (the reports written) and the exit."""
    fin = [t for t, line in stamped if (m := _LINE.match(line)) and _FINISHED.match(m.group(2))]
    last = max(fin, default=None)
    after = [(t, line) for t, line in stamped if last is not None and t >= last]
    report = next((t for t, line in after if line.startswith("report: ")), None)
    return {"last_worker_finished_s": last, "report_line_s": report, "exit_s": round(wall, 2),
            "lines_after_last_worker": [[t, line[:120]] for t, line in after[:40]]}


def seconds(text: str) -> float:
    """kernelscope's durations: '3.2 s', '1m 05s', '1h 02m'."""
    if text.endswith(" s"):
        return float(text[:-2])
    a, b = text.split()
    return int(a[:-1]) * (3600 if a.endswith("h") else 60) + int(b[:-1]) * (60 if a.endswith("h") else 1)


def stage_times(log_text: str) -> dict[str, dict]:
    """Per worker process ("[process 2/3, 1/3] eager"): seconds per stage, and its whole wall ("finished in")."""
    procs: dict[str, dict] = {}
    for line in log_text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        p = procs.setdefault(m.group(1), {"stages_s": {}, "finished_s": None})
        fin, took = _FINISHED.match(m.group(2)), _TOOK.search(m.group(2))
        if fin:
            p["finished_s"] = seconds(fin.group(1))
            # what no later line reported: the start before the first stage, and the last stage
            p["stages_s"]["rest"] = round(p["finished_s"] - sum(p["stages_s"].values()), 1)
        elif took:
            stage = took.group(1)
            p["stages_s"][stage] = round(p["stages_s"].get(stage, 0.0) + seconds(took.group(2)), 1)
    return procs


def worker_records(run_dir: Path) -> dict[str, dict]:
    """Per worker (``<mode>`` or ``<mode>/process-N``): its first call, compile (Inductor's cache counters: did a
    later process compile from the first one's cache, or bypass it?), wall and start, from its capture.json."""
    out = {}
    for cap in sorted(run_dir.glob("modes/*/capture.json")) + sorted(run_dir.glob("modes/*/process-*/capture.json")):
        try:
            rec = json.loads(cap.read_text())
        except (OSError, ValueError):
            continue
        keys = ("status", "first_call_s", "compile", "wall_s", "started_at", "compile_workers_stopped")
        out[str(cap.parent.relative_to(run_dir / "modes"))] = {k: rec.get(k) for k in keys}
    return out


def equal_compiles(data: dict) -> dict | None:
    """kernelscope's wall with the hand script's compiles in place of its own first processes' (max-autotune's
    compile alone varies 112-198 s between identical runs, which would decide the ratio): the extra seconds
    (profile wall - hand wall - each compiled mode's first-call difference) and the ratio (hand + extra) / hand.
    None where a side did not finish or a compiled mode lacks a first call on either side."""
    hand, prof = data.get("hand") or {}, data.get("profile") or {}
    if not (hand.get("finished") and prof.get("finished")):
        return None
    diffs = {}
    for name, m in (prof.get("modes") or {}).items():
        if name == "eager":
            continue
        h = ((hand.get("modes") or {}).get(name) or {}).get("stages_s", {}).get("compile (first call)")
        if m.get("first_call_s") is None or h is None:
            return None
        diffs[name] = m["first_call_s"] - h
    extra = prof["wall_s"] - hand["wall_s"] - sum(diffs.values())
    return {"compile_differences_s": {k: round(v, 1) for k, v in diffs.items()}, "extra_s": round(extra, 1),
            "ratio": round((hand["wall_s"] + extra) / hand["wall_s"], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--set", action="append", default=None, metavar="NAME=VALUE",
                    help=f"model constants for both runs, added to {' '.join(SETS)}")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--modes", default="eager,default,max-autotune", help="both runs (profile's default)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--deadline", type=float, default=560.0, help="seconds for both runs together")
    ap.add_argument("--only", choices=["hand", "profile"], default=None)
    ap.add_argument("--out-dir", default=os.environ.get("OUT", "."))
    a = ap.parse_args()
    deadline = time.time() + a.deadline
    preflight(a)
    out = Path(a.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sets = [*SETS, *(a.set or [])]
    set_args = [f"--set={s}" for s in sets]
    work = Path(tempfile.mkdtemp(prefix="h200-cost-"))
    data: dict = {"model": a.model, "sets": sets, "dtype": a.dtype, "device": a.device}
    if a.only != "profile":
        hand_json = work / "hand.json"
        wall, code, _ = run([sys.executable, str(HERE / "hand_llama.py"), a.model, *set_args, "--dtype", a.dtype,
                          "--device", a.device, "--modes", a.modes, "--json", str(hand_json)],
                         out / "hand.log", deadline)
        own = json.loads(hand_json.read_text()) if hand_json.exists() else {}
        # the wall measured here, as for profile (the script's own "wall_s", from inside it, would leave out its
        # interpreter's start and imports: 3 s of 227 s at 02:42 on 2026-12-05)
        own["own_wall_s"] = own.pop("wall_s", None)
        data["hand"] = {**own, "wall_s": round(wall, 1), "exit": code, "finished": code == 0}
        print(f"hand script: {wall:.1f} s (exit {code})", flush=True)
    if a.only != "hand":
        ks_out = work / "profile"
        wall, code, stamped = run([sys.executable, "-m", "kernelscope", "profile", a.model, *set_args, "--dtype",
                                   a.dtype, "--device", a.device, "--modes", a.modes, "--out", str(ks_out),
                                   "--force"], out / "profile.log", deadline)
        data["profile"] = {"wall_s": round(wall, 1), "exit": code, "finished": code is not None,
                           "processes": stage_times((out / "profile.log").read_text(errors="replace")),
                           "tail": tail_times(stamped, wall)}
        data["profile"]["workers"] = worker_records(ks_out)
        if (ks_out / "summary.md").exists():
            shutil.copy(ks_out / "summary.md", out / "summary.md")
        if (ks_out / "result.json").exists():
            result = json.loads((ks_out / "result.json").read_text())
            (out / "result.json.gz").write_bytes(gzip.compress(json.dumps(result).encode()))
            data["profile"]["modes"] = {m["name"]: {
                "status": m["status"], "first_call_s": m.get("first_call_s"),
                **{k: (m.get("latency_ms") or {}).get(k) for k in ("median", "low", "high", "per_process")}}
                for m in result["modes"]}
        print(f"kernelscope profile: {wall:.1f} s (exit {code})", flush=True)
        tail = data["profile"]["tail"]
        if tail["last_worker_finished_s"] is not None:
            print(f"  after the last worker ({tail['last_worker_finished_s']} s): report line at "
                  f"{tail['report_line_s']} s, exit at {tail['exit_s']} s", flush=True)
        for label, p in data["profile"]["processes"].items():
            parts = ", ".join(f"{k} {v:.1f}" for k, v in p["stages_s"].items())
            print(f"  {label}: {p['finished_s']} s: {parts}", flush=True)
        # where each compiled worker's first call went (Dynamo's and Inductor's timers, capture records since
        # session 17): a later process that lowers its graph again shows GraphLowering.* here
        for worker, w in data["profile"]["workers"].items():
            phases = (w.get("compile") or {}).get("phases_s") or {}
            if phases:
                # the timers inside the wrappers every compile has (those nest the rest)
                inner = [(k, v) for k, v in phases.items() if k not in _WRAPPER_TIMERS]
                top = ", ".join(f"{k} {v:.1f}" for k, v in inner[:5])
                lowered = any(k.startswith("GraphLowering") for k in phases)
                # a later process's Triton kernels whose cached coordinate-descent result it kept (session 19)
                kept = (w.get("compile") or {}).get("coordesc_kept")
                print(f"  {worker}: first call {w.get('first_call_s') or 0:.1f} s "
                      f"({'lowered' if lowered else 'no lowering'}"
                      f"{f', coordesc kept {kept}' if kept else ''}): {top}", flush=True)
    if "hand" in data and "profile" in data and data["hand"]["finished"] and data["profile"]["finished"]:
        data["ratio"] = round(data["profile"]["wall_s"] / data["hand"]["wall_s"], 3)
        print(f"profile / hand script: {data['ratio']:.2f}x (target <= 1.25x)", flush=True)
        eq = equal_compiles(data)
        if eq is not None:
            data["equal_compiles"] = eq
            print(f"with the hand script's compiles: {eq['extra_s']:.1f} s added, {eq['ratio']:.2f}x (first-call "
                  f"differences {', '.join(f'{k} {v:+.1f} s' for k, v in eq['compile_differences_s'].items())})",
                  flush=True)
    (out / "cost.json").write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
