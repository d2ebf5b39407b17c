"""Does a timed sample's length, or the warm-up's, move a launch-bound model's per-call time? (issue 13, H200)

kernelscope's timed samples are k back-to-back calls between two CUDA events; k comes from an estimate of the
per-call time. Two questions, for one mode of a model in one fresh process (no kernelscope code in it):

``ramp``    right after the first call (the compile), single calls timed back to back (each ending in a
            synchronize, as a warm-up times them) for 2 s: the median per 100 ms bucket shows how long the
            per-call time takes to settle (GPU clocks rise from idle, caches warm);
``lengths`` after that, rounds of samples of k = 1, 3, 10, 30, 100 calls (interleaved, 20 rounds) on the CPU
            where the process runs: the median ms per call for each k. A sample pays the last kernel's tail and
            the event's latency once, so short samples read high; how high says how long a sample must be.

    python benchmarks/sample_length.py samples/linear_gelu.py --mode default [--json OUT.jsonl]
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import time

_libc = ctypes.CDLL(None)
MODES = {"eager": None, "default": "default", "max-autotune": "max-autotune-no-cudagraphs"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--mode", default="default", choices=sorted(MODES))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    import importlib.util

    import torch

    torch.manual_seed(0)
    spec = importlib.util.spec_from_file_location("length_model", a.model)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    model = mod.get_model().cuda().eval()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    if a.mode != "eager":
        import torch._inductor.config as ic

        ic.freezing = False
        fn = torch.compile(model, mode=MODES[a.mode])
    else:
        fn = model

    def timed(n: int) -> float:
        """µs per call over n back-to-back calls between two CUDA events."""
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            fn(*inputs)
        e.record()
        e.synchronize()
        return s.elapsed_time(e) * 1000.0 / n

    with torch.no_grad():
        fn(*inputs)
        torch.cuda.synchronize()
        if a.mode != "eager":
            try:
                from torch._inductor import async_compile

                async_compile.shutdown_compile_workers()
            except Exception:
                pass
        os.sched_setaffinity(0, {int(_libc.sched_getcpu())})  # one CPU throughout: the lengths compare on equal terms
        t0 = time.perf_counter()
        ramp: dict[int, list[float]] = {}
        while (now := time.perf_counter() - t0) < 2.0:
            ramp.setdefault(int(now * 10), []).append(timed(1))
        lengths: dict[int, list[float]] = {k: [] for k in (1, 3, 10, 30, 100)}
        for _ in range(20):
            for k in lengths:
                lengths[k].append(timed(k))
    rec = {"mode": a.mode, "cpu": int(_libc.sched_getcpu()),
           "ramp_us": {f"{b / 10:.1f}s": round(statistics.median(v), 2) for b, v in sorted(ramp.items())},
           "ramp_calls": sum(len(v) for v in ramp.values()),
           "lengths_us": {str(k): round(statistics.median(v), 2) for k, v in lengths.items()},
           "lengths_iqr_us": {str(k): round(statistics.quantiles(v, n=4)[2] - statistics.quantiles(v, n=4)[0], 2)
                              for k, v in lengths.items()}}
    print(json.dumps(rec), flush=True)
    if a.json:
        with open(a.json, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
