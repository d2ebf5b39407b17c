"""Build a large torch.profiler trace with the structure of a real one, for benchmarks and large-trace tests.

A real fixture (the H200 traces in ../shared/fixtures, or their gzipped copies in tests/data) holds a few
profiled iterations. This script replicates that block of iterations (CPU ops, runtime launches, kernels, ac2g
flows, CPU and GPU annotations, ProfilerStep markers) N times, each copy shifted in time past the previous one,
with fresh External ids, correlation ids, flow ids, ``Ev Idx`` and ProfilerStep numbers, so the result looks like
one long profiling session and every copy analyses exactly like the original.

Output is streamed one event per line (as Kineto writes it): no list of millions of events is ever built, so a
3M-event trace is written in constant memory. ``"distributedInfo": {"rank": 0}`` is added when the fixture has
none, because HolisticTraceAnalysis finds a file's rank by a regex on that key.

    python benchmarks/gen_large_trace.py --fixture seed-default --events 1000000 --out /tmp/ks-1m.trace.json
    python benchmarks/gen_large_trace.py --events 3000000 --out /tmp/ks-3m.trace.json.gz --gzip
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
# The originals in ../shared, else the repository's gzipped copies of the same traces.
FIXTURE_DIRS = (ROOT.parent / "shared" / "fixtures", ROOT / "tests" / "data")
_STEP = re.compile(r"^ProfilerStep#(\d+)$")
# Rows that describe the whole session rather than one iteration: emitted once, not replicated.
_SESSION_PHASES = frozenset({"M", "i", "I"})
_SESSION_CATS = frozenset({"Trace"})


@dataclass(frozen=True, slots=True)
class Template:
    """A fixture split into what is replicated per copy and what is written once."""

    top: dict[str, Any]  # every top-level key except traceEvents
    block: tuple[dict[str, Any], ...]  # the iterations' events, in file order
    session: tuple[dict[str, Any], ...]  # metadata rows, the profiler span, instant markers
    period_us: int  # how far each copy is shifted: the block's span plus a gap, whole microseconds
    ext_span: int  # External ids of copy k are id + k * ext_span
    corr_span: int  # correlation (and ac2g flow) ids of copy k are id + k * corr_span
    flow_span: int  # other flows' ids (fwdbwd...) of copy k are id + k * flow_span
    evidx_span: int  # and their "Ev Idx" (the profiler's event index) moves the same way
    step_span: int  # ProfilerStep#N of copy k is N + k * step_span


@dataclass(frozen=True, slots=True)
class Written:
    path: Path
    events: int
    copies: int
    block_events: int


def resolve_fixture(name_or_path: str) -> Path:
    """A path, or a fixture stem such as ``seed-default`` / ``mmrelu-nvgemm`` (see FIXTURE_DIRS)."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    hits = [h for d in FIXTURE_DIRS for h in sorted(d.glob(f"*/{name_or_path}.trace.json*"))]
    if not hits:
        known = sorted({h.name.split(".trace.json")[0] for d in FIXTURE_DIRS for h in d.glob("*/*.trace.json*")})
        raise SystemExit(f"no fixture {name_or_path!r}; pass a trace path or one of: {', '.join(known)}")
    return hits[0]


def _is_session(ev: dict[str, Any]) -> bool:
    return ev.get("ph") in _SESSION_PHASES or ev.get("cat") in _SESSION_CATS


def load_template(fixture: Path) -> Template:
    raw = fixture.read_bytes()
    data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    events = data["traceEvents"]
    top = {k: v for k, v in data.items() if k != "traceEvents"}
    block = tuple(e for e in events if not _is_session(e))
    session = tuple(e for e in events if _is_session(e))
    starts = [e["ts"] for e in block if "ts" in e]
    ends = [e["ts"] + e.get("dur", 0) for e in block if "ts" in e]
    # Whole microseconds keep each timestamp's fractional digits as they were (ts + integer).
    period = math.ceil(max(ends) - min(starts)) + 10

    def span(values: list[int]) -> int:
        return max(values, default=0) + 1

    args = [e.get("args") or {} for e in block]
    steps = [int(m.group(1)) for e in block if (m := _STEP.match(str(e.get("name", ""))))]
    return Template(
        top=top,
        block=block,
        session=session,
        period_us=period,
        ext_span=span([a["External id"] for a in args if isinstance(a.get("External id"), int)]),
        corr_span=span(
            [a["correlation"] for a in args if isinstance(a.get("correlation"), int)]
            + [e["id"] for e in block if e.get("cat") == "ac2g" and isinstance(e.get("id"), int)]
        ),
        flow_span=span([e["id"] for e in block if e.get("ph") in ("s", "f", "t") and isinstance(e.get("id"), int)]),
        evidx_span=span([a["Ev Idx"] for a in args if isinstance(a.get("Ev Idx"), int)]),
        step_span=(max(steps) - min(steps) + 1) if steps else 0,
    )


def shifted(ev: dict[str, Any], k: int, t: Template) -> dict[str, Any]:
    """Copy ``k`` of one block event: later in time, with ids no other copy uses."""
    if k == 0:
        return ev
    out = dict(ev)
    if "ts" in out:
        out["ts"] = round(out["ts"] + k * t.period_us, 3)
    if isinstance(out.get("id"), int):
        out["id"] += k * (t.corr_span if out.get("cat") == "ac2g" else t.flow_span)
    if t.step_span and (m := _STEP.match(str(out.get("name", "")))):
        out["name"] = f"ProfilerStep#{int(m.group(1)) + k * t.step_span}"
    args = out.get("args")
    if isinstance(args, dict):
        args = dict(args)
        if isinstance(args.get("External id"), int):
            args["External id"] += k * t.ext_span
        if isinstance(args.get("correlation"), int):
            args["correlation"] += k * t.corr_span
        if isinstance(args.get("Ev Idx"), int):
            args["Ev Idx"] += k * t.evidx_span
        out["args"] = args
    return out


def copies_for(t: Template, events: int) -> int:
    return max(1, round((events - len(t.session)) / len(t.block)))


def iter_events(t: Template, copies: int) -> Iterator[dict[str, Any]]:
    """Yield every event of the large trace, one at a time."""
    for k in range(copies):
        for ev in t.block:
            yield shifted(ev, k, t)
    extra = (copies - 1) * t.period_us
    for ev in t.session:
        if ev.get("cat") in _SESSION_CATS and "dur" in ev:  # the profiler span covers the whole session
            ev = {**ev, "dur": round(ev["dur"] + extra, 3)}
        elif ev.get("ph") in ("i", "I") and "End" in str(ev.get("name", "")):
            ev = {**ev, "ts": round(ev["ts"] + extra, 3)}
        yield ev


def _header(t: Template) -> bytes:
    top = dict(t.top)
    # HTA reads a file's rank with the regex '"rank":\s+(\d+)': json.dumps's default ": " separator matches it.
    top.setdefault("distributedInfo", {"rank": 0})
    top.pop("traceName", None)  # names the fixture's original path, which this file is not
    head = json.dumps(top)
    return (head[:-1] + (", " if top else "") + '"traceEvents": [\n').encode()


def write_stream(t: Template, copies: int, f: IO[bytes]) -> int:
    encode = msgspec.json.encode
    f.write(_header(t))
    n = 0
    for ev in iter_events(t, copies):
        if n:
            f.write(b",\n")
        f.write(encode(ev))
        n += 1
    f.write(b"\n]}\n")
    return n


def write_large_trace(fixture: str | Path, events: int, out: str | Path, *, gz: bool | None = None) -> Written:
    """Write a trace of about ``events`` events built from ``fixture``; gzip it when ``gz`` (or out ends .gz)."""
    t = load_template(resolve_fixture(str(fixture)))
    copies = copies_for(t, events)
    out = Path(out)
    gz = out.suffix == ".gz" if gz is None else gz
    out.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        # compresslevel 1: these files are benchmark inputs, and level 9 on 1 GB costs minutes of a shared CPU.
        with gzip.open(out, "wb", compresslevel=1) as f:
            n = write_stream(t, copies, f)
    else:
        with open(out, "wb", buffering=1 << 20) as f:
            n = write_stream(t, copies, f)
    return Written(path=out, events=n, copies=copies, block_events=len(t.block))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", default="seed-default", help="fixture stem (shared/fixtures or tests/data), or a path")
    ap.add_argument("--events", type=int, required=True, help="about how many trace events to write")
    ap.add_argument("--out", required=True, help="output path (keep it out of git, e.g. under /tmp)")
    ap.add_argument("--gzip", action="store_true", help="gzip the output (also implied by an .gz suffix)")
    a = ap.parse_args(argv)
    w = write_large_trace(a.fixture, a.events, a.out, gz=a.gzip or a.out.endswith(".gz"))
    size = w.path.stat().st_size / 1e6
    print(f"{w.path}: {w.events} events ({w.copies} copies of {w.block_events}), {size:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
