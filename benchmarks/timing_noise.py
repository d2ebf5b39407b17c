"""Timing noise right after a compile: Inductor's compile workers left running vs stopped (what kernelscope's
worker does before warming up), and optionally gc.freeze(). Prints six timed windows per process.

    python benchmarks/timing_noise.py keep|stop [default|dynamic] [--freeze] [--batch N]

Run each variant in a fresh process with a fresh TORCHINDUCTOR_CACHE_DIR, several times: between-process spread
is part of what it shows. Results (H200) are in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gc

import torch

from kernelscope.capture.compiling import _shutdown_compile_workers
from kernelscope.capture.timing import _drift, _quantiles, _Timer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workers", choices=["keep", "stop"])
    ap.add_argument("mode", nargs="?", default="default", choices=["default", "dynamic"])
    ap.add_argument("--freeze", action="store_true", help="gc.collect(); gc.freeze() before timing")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--windows", type=int, default=6)
    a = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.half if device == "cuda" else torch.float32
    n = 4096 if device == "cuda" else 256
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(n, n), torch.nn.GELU()).to(device, dtype)
    x = torch.randn(a.batch, n, device=device, dtype=dtype)
    fn = torch.compile(m, dynamic=True) if a.mode == "dynamic" else torch.compile(m)
    timer = _Timer(torch, device)
    with torch.no_grad():
        fn(x)
        timer.sync()
        if a.workers == "stop":
            _shutdown_compile_workers(torch)
        if a.freeze:
            gc.collect()
            gc.freeze()
        for w in range(a.windows):
            s = [timer.time(lambda: fn(x), 10) * 1e3 for _ in range(30)]
            q = _quantiles(s)
            print(f"{a.workers} {a.mode}{' freeze' if a.freeze else ''} window {w}: median {q['median'] * 1e3:.1f} us "
                  f"iqr {q['iqr'] * 1e3:.1f} us drift {_drift(s):.2f}")


if __name__ == "__main__":
    main()
