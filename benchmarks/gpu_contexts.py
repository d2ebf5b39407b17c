"""Which of kernelscope's worker processes hold a CUDA context, and when (issue 27: a process started ahead of its
turn waits at its pre-gate "before anything goes to the device"; this checks it with nvidia-smi instead of reading
torch's code).

    python3 benchmarks/gpu_contexts.py --out contexts.json -- python3 -m kernelscope profile MODEL ...

Runs the command and, every --interval seconds until it ends, samples:
- ``nvidia-smi --query-compute-apps=pid,used_memory``: the processes that hold a CUDA context (host pids: in a
  container they may not be this namespace's; then only the counts below can be read);
- every descendant of the command whose command line runs ``kernelscope.capture.worker``: which of its gate FIFOs
  it has open (``pre-gate``: started ahead of its turn, before anything went to the device; ``gate``: a later
  process before its warm-up; capture/rounds.py), its kernel wait channel (``/proc/PID/wchan``), and which
  ``/dev/nvidia*`` files it has open (recorded only: the driver opens them before any context exists).

Each worker's sample also names what its descendants run (their command lines, with their CPU ticks).

Writes every sample and a summary: per worker, its waits at each gate and whether it held a context during them
(its pid in nvidia-smi's list of compute processes; the summary says whether those pids are the workers' at
all), and how long it sat idle outside its gates while its children ran (``waits_on_children``: on the H200
each of default's later processes spent ~10 s of its ~16 s compile from the cache so). Exits with the command's
exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

WORKER = "kernelscope.capture.worker"
GATES = ("pre-gate", "gate")  # the FIFOs' file names (commands/profile.py)
KID_CMD = 160
TICKS_PER_S = os.sysconf("SC_CLK_TCK")  # /proc/PID/stat's CPU time unit
IDLE, BUSY = 0.1, 0.5  # of one CPU: waits_on_children


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return None


def process_table() -> tuple[dict[int, list[int]], dict[int, int]]:
    """One read of /proc/*/stat: (each pid's children, each pid's CPU ticks: utime + stime)."""
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read(f"/proc/{name}/stat")
        if not stat:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'
        fields = stat[stat.rfind(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(name))
        ticks[int(name)] = int(fields[11]) + int(fields[12])
    return children, ticks


def descendants(children: dict[int, list[int]], root: int) -> list[int]:
    """Every live process under ``root``."""
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def open_files(pid: int) -> tuple[list[str], str | None]:
    """(the /dev/nvidia* files the process has open, the gate FIFO it has open or None). A worker blocks in
    read(2) on its gate once the parent has opened the other end, and for a moment before that in open(2), with no
    descriptor yet: a sample then misses that wait's first ~50 ms (rounds.POLL_S)."""
    fd_dir = f"/proc/{pid}/fd"
    found, gate = set(), None
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return [], None
    for fd in fds:
        try:
            target = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue
        if target.startswith("/dev/nvidia"):
            found.add(target)
        elif os.path.basename(target) in GATES:
            gate = os.path.basename(target)
    return sorted(found), gate


def kid_commands(kids: list[int], ticks: dict[int, int]) -> dict[str, int]:
    """What a worker's descendants run: each distinct command line (its first KID_CMD characters, arguments
    joined by spaces) -> their CPU ticks summed (which child costs a later process's compile its time: a
    compile-worker pool, a compiler, a probe)."""
    out: dict[str, int] = {}
    for k in kids:
        cmd = (_read(f"/proc/{k}/cmdline") or "").replace("\0", " ").strip()[:KID_CMD] or "?"
        out[cmd] = out.get(cmd, 0) + ticks.get(k, 0)
    return out


def compute_apps() -> dict[int, int] | None:
    """pid -> MiB used, from nvidia-smi; None where it cannot be run."""
    try:
        proc = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    apps = {}
    for line in proc.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit():
            apps[int(parts[0])] = int(parts[1]) if parts[1].isdigit() else -1
    return apps


def sample(root: int, t0: float) -> dict[str, Any]:
    """Also, for where a run's CPUs go: how many processes run under the command, their CPU ticks (live ones
    only: a process that ended takes its ticks with it), per worker its own and its children's ticks (Inductor's
    compile-worker pools), and the load average."""
    workers = {}
    children, all_ticks = process_table()
    below = descendants(children, root)
    ticks = {pid: all_ticks[pid] for pid in below}
    for pid in below:
        cmd = _read(f"/proc/{pid}/cmdline")
        if not cmd or WORKER not in cmd:
            continue
        dev, gate = open_files(pid)
        kids = descendants(children, pid)
        workers[str(pid)] = {"wchan": (_read(f"/proc/{pid}/wchan") or "").strip(), "dev": dev, "gate": gate,
                             "ticks": ticks[pid], "children": len(kids),
                             "children_ticks": sum(ticks.get(k, 0) for k in kids),
                             "kids": kid_commands(kids, ticks)}
    apps = compute_apps()
    return {"t": round(time.monotonic() - t0, 2), "workers": workers, "processes": len(below),
            "ticks": sum(ticks.values()), "load": (_read("/proc/loadavg") or "").split()[:3],
            "apps": None if apps is None else {str(k): v for k, v in apps.items()}}


def holds_context(pid: str, s: dict[str, Any]) -> bool | None:
    """Whether the worker holds a CUDA context: its pid in nvidia-smi's compute processes (None where nvidia-smi
    could not be run). Open /dev/nvidia* files are no sign of one: on the H200 every worker waiting at its
    pre-gate had /dev/nvidia0, nvidia-uvm and nvidiactl open (the driver initialised by torch reading the device's
    properties) while nvidia-smi listed none of them."""
    return None if s["apps"] is None else pid in s["apps"]


def waits_on_children(samples: list[dict[str, Any]], hz: int = TICKS_PER_S) -> dict[str, dict[str, float]]:
    """Per worker: the time it sat idle (under IDLE of a CPU) outside its gates while its children ran (over BUSY
    of a CPU), and the children's CPU seconds then: a compile waiting on a subprocess (a compiler, a probe, a
    compile-worker pool starting), read between consecutive samples. Children that ended take their ticks with
    them, so an interval where the children's ticks fell does not count."""
    out: dict[str, dict[str, float]] = {}
    for a, b in zip(samples, samples[1:]):
        dt = b["t"] - a["t"]
        if dt <= 0:
            continue
        for pid, wb in b["workers"].items():
            wa = a["workers"].get(pid)
            if wa is None or wa["gate"] is not None or wb["gate"] is not None:
                continue
            own = (wb["ticks"] - wa["ticks"]) / hz / dt
            kids = (wb["children_ticks"] - wa["children_ticks"]) / hz / dt
            if own < IDLE and kids > BUSY:
                o = out.setdefault(pid, {"seconds": 0.0, "children_cpu_s": 0.0})
                o["seconds"] = round(o["seconds"] + dt, 2)
                o["children_cpu_s"] = round(o["children_cpu_s"] + kids * dt, 2)
    return out


def summarize(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Per worker: when it was first seen and first held a context, and its waits at each gate (consecutive
    samples with that FIFO open) with whether it held a context during each."""
    per: dict[str, dict[str, Any]] = {}
    smi_pids: set[str] = set()
    worker_pids: set[str] = set()
    most_contexts = 0
    for s in samples:
        if s["apps"] is not None:
            smi_pids.update(s["apps"])
            most_contexts = max(most_contexts, len(s["apps"]))
        for pid, w in s["workers"].items():
            worker_pids.add(pid)
            p = per.setdefault(pid, {"first_seen": s["t"], "first_context": None, "waits": [], "_at": None})
            ctx = bool(holds_context(pid, s))
            if ctx and p["first_context"] is None:
                p["first_context"] = s["t"]
            if w["gate"] is not None and w["gate"] == p["_at"]:
                last = p["waits"][-1]
                last["to"], last["samples"], last["context"] = s["t"], last["samples"] + 1, last["context"] or ctx
            elif w["gate"] is not None:
                p["waits"].append({"gate": w["gate"], "from": s["t"], "to": s["t"], "samples": 1, "context": ctx})
            p["_at"] = w["gate"]
    for p in per.values():
        del p["_at"]
    waits = [w for p in per.values() for w in p["waits"]]
    counts = {g: {"waits": sum(w["gate"] == g for w in waits),
                  "with_context": sum(w["gate"] == g and w["context"] for w in waits),
                  "seconds": round(sum(w["to"] - w["from"] for w in waits if w["gate"] == g), 1)} for g in GATES}
    return {
        "samples": len(samples),
        "workers": len(per),
        "nvidia_smi_ran": any(s["apps"] is not None for s in samples),
        "nvidia_smi_pids_match_workers": bool(smi_pids & worker_pids),
        "most_contexts_at_once": most_contexts,
        "most_workers_at_once": max((len(s["workers"]) for s in samples), default=0),
        **{g.replace("-", "_"): c for g, c in counts.items()},
        "waits_on_children": waits_on_children(samples),
        "per_worker": per,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        sys.exit("gpu_contexts: no command (put it after --)")
    t0, wall0 = time.monotonic(), time.time()
    proc = subprocess.Popen(cmd)
    samples: list[dict[str, Any]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            samples.append(sample(proc.pid, t0))
            done.wait(a.interval)

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    code = proc.wait()
    done.set()
    th.join()
    summary = summarize(samples)
    Path(a.out).write_text(json.dumps({"command": cmd, "started_unix": wall0, "summary": summary, "samples": samples}))
    brief = {k: v for k, v in summary.items() if k != "per_worker"}
    print("gpu_contexts:", json.dumps(brief), flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
