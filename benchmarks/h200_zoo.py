"""Profile the model zoo (tests/zoo/models, tests/models/kb_*) at real size on the H200 in one device call.

usage (device): python3 benchmarks/h200_zoo.py PLAN DEADLINE_S PARALLEL [name ...]
PLAN is a JSON file: {"name": {"model": path, "sets": [..], "modes": "eager,default", "dtype": "bfloat16",
"args": [...]}} (or a Python literal of the same). Runs `python3 -m kernelscope profile` for each entry,
PARALLEL at a time, longest first as listed; state lives in /tmp/kszoo, so a second call on the same warm
machine continues where the first stopped. Packs result.json, summary.md, the terminal output, capture.json,
Inductor's output code and provenance, the gzipped compile logs and traces (within a budget) into
$OUT/zoo.tar.xz.partN (14 MiB parts: the device returns at most 8 files of 16 MiB).
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import time

ROOT = "/tmp/kszoo"
TRACE_BUDGET = 40_000_000
# short runs: these profiles are for fixtures and verdicts, not for latency claims
DEFAULT_ARGS = ["--processes", "1", "--repeats", "10", "--steps", "2", "--timeout", "300", "--cpu-pinning", "off"]


def main() -> None:
    plan_path, deadline, par = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    text = open(plan_path).read()
    plan = json.loads(text) if plan_path.endswith(".json") else ast.literal_eval(text)
    names = sys.argv[4:] or list(plan)
    os.makedirs(ROOT, exist_ok=True)
    t0 = time.time()
    todo = [n for n in names if not os.path.exists(f"{ROOT}/{n}.done")]
    running: dict[str, tuple[subprocess.Popen[bytes], float, list[str]]] = {}
    while todo or running:
        while todo and len(running) < par and time.time() - t0 < deadline:
            n = todo.pop(0)
            e = plan[n]
            if e.get("script"):
                cmd = [sys.executable] + e["script"]
            else:
                cmd = [sys.executable, "-m", "kernelscope", "profile", e["model"], "--modes", e.get("modes",
                       "eager,default,max-autotune"), "--dtype", e.get("dtype", "bfloat16"), "--out", f"{ROOT}/{n}",
                       "--force"] + [a for s in e.get("sets", []) for a in ("--set", s)] + e.get("args", DEFAULT_ARGS)
            f = open(f"{ROOT}/{n}.log", "w")
            running[n] = (subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True,
                                           env={**os.environ, "COLUMNS": "120"}), time.time(), cmd)
            print(json.dumps({"start": n, "at_s": round(time.time() - t0)}), flush=True)
        if time.time() - t0 >= deadline:
            todo = []
        for n, (p, ts, cmd) in list(running.items()):
            if p.poll() is None and time.time() - t0 > deadline + 60:  # hard stop: packed as unfinished
                os.killpg(p.pid, 15)
                time.sleep(5)
                try:
                    os.killpg(p.pid, 9)
                except ProcessLookupError:
                    pass
                p.wait()
            if p.poll() is not None:
                rec = {"name": n, "rc": p.returncode, "wall_s": round(time.time() - ts, 1), "cmd": " ".join(cmd[1:])}
                json.dump(rec, open(f"{ROOT}/{n}.done", "w"))
                print(json.dumps(rec), flush=True)
                del running[n]
        time.sleep(1)
    pack(os.environ.get("OUT", "/tmp/out"))
    print("left:", [n for n in names if not os.path.exists(f"{ROOT}/{n}.done")], "elapsed", round(time.time() - t0))


def pack(out: str) -> None:
    budget = [TRACE_BUDGET]

    def keep(fp: str) -> str | None:  # "plain", "gzip" or None
        size = os.path.getsize(fp)
        if fp.endswith(".pt.trace.json.gz"):
            budget[0] -= size
            return "plain" if budget[0] > 0 else None
        if fp.endswith(("result.json", "summary.md", "capture.json", "provenance.json")) or "/code/" in fp:
            return "plain" if size < 3_000_000 else "gzip"
        if fp.endswith("log.txt"):
            return "gzip"
        return None

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as t:
        for d in sorted(os.listdir(ROOT)):
            p = os.path.join(ROOT, d)
            if os.path.isfile(p):
                t.add(p, arcname=d)
                continue
            for dp, _dn, fn in os.walk(p):
                for x in sorted(fn):
                    fp = os.path.join(dp, x)
                    how = keep(fp)
                    arc = os.path.relpath(fp, ROOT)
                    if how == "plain":
                        t.add(fp, arcname=arc)
                    elif how == "gzip":
                        data = gzip.compress(open(fp, "rb").read())
                        ti = tarfile.TarInfo(arc + ".gz")
                        ti.size = len(data)
                        t.addfile(ti, io.BytesIO(data))
    data = buf.getvalue()
    part = 14 * 1024 * 1024
    os.makedirs(out, exist_ok=True)
    for i in range(0, len(data), part):
        open(os.path.join(out, f"zoo.tar.xz.part{i // part}"), "wb").write(data[i:i + part])
    print("packed", len(data), "bytes", flush=True)


if __name__ == "__main__":
    main()
