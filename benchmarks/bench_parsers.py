"""How the trace reader was chosen: each way of reading one large trace, timed in a fresh subprocess.

Each candidate reads the file and pulls out what ``load_trace`` needs from each event (phase, category, name,
ts, dur, pid, tid and the args correlation / External id / stream / device / Input Dims / Input type), or, for
the end-to-end rows, builds the Trace. CPU time and peak RSS come from the child's rusage (os.wait4).

    python benchmarks/gen_large_trace.py --fixture seed-default --events 1000000 --out /tmp/ks-1m.trace.json
    python benchmarks/bench_parsers.py /tmp/ks-1m.trace.json

Optional candidates (pysimdjson, ijson) are skipped when not installed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIELDS = "ph cat name ts dur pid tid".split()
ARGS = ["correlation", "External id", "stream", "device", "Input Dims", "Input type"]

# name -> (what it is, child code). Each child gets the trace path as argv[1] and prints the event count.
CANDIDATES: dict[str, tuple[str, str]] = {
    "json": ("stdlib json.loads, a dict per event", """
import json, sys
events = json.loads(open(sys.argv[1], "rb").read())["traceEvents"]
print(len(events))
"""),
    "orjson": ("orjson.loads, a dict per event (the reader before this change)", """
import orjson, sys
events = orjson.loads(open(sys.argv[1], "rb").read())["traceEvents"]
print(len(events))
"""),
    "orjson, GC paused": ("orjson.loads with the cyclic GC off while it builds the dicts", """
import gc, orjson, sys
gc.disable()
events = orjson.loads(open(sys.argv[1], "rb").read())["traceEvents"]
print(len(events))
"""),
    "msgspec, untyped": ("msgspec.json.decode into dicts, GC paused", """
import gc, msgspec, sys
gc.disable()
events = msgspec.json.decode(open(sys.argv[1], "rb").read())["traceEvents"]
print(len(events))
"""),
    "msgspec, typed structs": ("msgspec into structs holding only the used keys, whole file at once", """
import gc, msgspec, sys
from typing import Any
gc.disable()
class Args(msgspec.Struct, gc=False):
    correlation: Any = None
    external_id: Any = msgspec.field(default=None, name="External id")
    stream: Any = None
    device: Any = None
    input_dims: msgspec.Raw = msgspec.field(default=None, name="Input Dims")
    input_types: msgspec.Raw = msgspec.field(default=None, name="Input type")
class Event(msgspec.Struct, gc=False):
    ph: Any = None
    cat: Any = None
    name: Any = None
    ts: Any = None
    dur: Any = None
    pid: Any = None
    tid: Any = None
    args: Args | None = None
class Top(msgspec.Struct):
    traceEvents: list[Event]
print(len(msgspec.json.decode(open(sys.argv[1], "rb").read(), type=Top).traceEvents))
"""),
    "msgspec, typed structs, by phase": ("as above, and non-X phases decode to empty structs (tagged union)", """
import gc, msgspec, sys
gc.disable()
from kernelscope.trace import _DECODE_CHUNK
raw = open(sys.argv[1], "rb").read()
start = raw.index(b"[", raw.index(b'"traceEvents"'))
end = raw.rindex(b"]")
print(len(_DECODE_CHUNK.decode(memoryview(raw)[start:end + 1])))
"""),
    "pysimdjson": ("simdjson's lazy DOM; the used fields read out per event", """
import gc, sys, simdjson
gc.disable()
doc = simdjson.Parser().parse(open(sys.argv[1], "rb").read())
n = 0
for ev in doc["traceEvents"]:
    a = ev.get("args")
    row = (ev.get("ph"), ev.get("cat"), ev.get("name"), ev.get("ts"), ev.get("dur"), ev.get("pid"), ev.get("tid"))
    if a is not None:
        row += (a.get("correlation"), a.get("External id"), a.get("stream"), a.get("device"))
    n += 1
print(n)
"""),
    "ijson (yajl2_c)": ("ijson's C backend, one event dict at a time (bounded memory)", """
import gc, ijson, sys
gc.disable()
n = 0
with open(sys.argv[1], "rb") as f:
    for ev in ijson.items(f, "traceEvents.item", use_float=True):
        n += 1
print(n)
"""),
    "load_trace, before": ("end to end: orjson dicts -> records (the old loader), GC on", """
import sys
from kernelscope.trace import _parse, _read_bytes, trace_from_dict
from pathlib import Path
p = Path(sys.argv[1])
print(trace_from_dict(_parse(_read_bytes(p), p), str(p)).total_events)
"""),
    "load_trace, now": ("end to end: the streaming reader (blocks, msgspec by phase, records)", """
import sys
from kernelscope.trace import load_trace
print(load_trace(sys.argv[1]).total_events)
"""),
}


def run(code: str, path: str) -> tuple[float, float, float, str]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code, path], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            return wall, 0.0, 0.0, "failed: " + err.read().decode(errors="replace").strip().splitlines()[-1][:120]
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read().decode().strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="an uncompressed trace (see gen_large_trace.py)")
    ap.add_argument("--only", help="comma-separated candidate names")
    a = ap.parse_args(argv)
    size = Path(a.trace).stat().st_size / 1e6
    print(f"{a.trace}: {size:.0f} MB\n")
    print("| reader | what | wall s | CPU s | peak RSS MB | RSS / file |")
    print("|---|---|---:|---:|---:|---:|")
    for name, (what, code) in CANDIDATES.items():
        if a.only and name not in a.only.split(","):
            continue
        wall, cpu, rss, out = run(code, a.trace)
        if out.startswith("failed"):
            print(f"| {name} | {what} | - | - | - | {out} |", flush=True)
            continue
        print(f"| {name} | {what} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {rss / size:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
