"""Measure this device's matmul and copy ceilings (run by ``kernelscope calibrate`` in a subprocess).

Run as ``python -m kernelscope.capture.calibrate SPEC_JSON``; prints one ``@@calibration {...}`` line. Square
GEMMs on random data (zeros would let the GPU clock higher than any real model does) time the dense matmul
ceiling per dtype; a large device-to-device ``copy_`` times memory bandwidth, counted as bytes read plus written.
"""

from __future__ import annotations

import datetime as _dt
import json
import statistics
import sys
from typing import Any

from kernelscope.capture.environment import environment
from kernelscope.capture.timing import _Timer


def _timer(torch: Any, device: str, fn: Any, n: int) -> float:
    """Seconds per call over n back-to-back calls (the worker's timer: CUDA events on GPU, perf_counter on CPU)."""
    return _Timer(torch, device).time(fn, n)


def _calls_for(torch: Any, device: str, fn: Any, target_s: float) -> int:
    # Enough calls per sample that one sample lasts ~target_s: launch overhead and timer resolution vanish.
    one = _timer(torch, device, fn, 1)
    return max(1, min(10_000, int(target_s / max(one, 1e-7))))


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    import torch

    want = spec.get("device", "auto")
    device = "cuda" if want == "auto" and torch.cuda.is_available() else ("cpu" if want == "auto" else want)
    if device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("@@error --device cuda but torch sees no CUDA device; pass --device cpu")
    env = environment(torch, device)
    repeats = int(spec.get("repeats", 10))
    target = float(spec.get("sample_seconds", 0.05 if device == "cuda" else 0.2))
    torch.manual_seed(0)
    matmul: dict[str, float] = {}
    best: dict[str, float] = {}
    n = int(spec.get("size") or (8192 if device == "cuda" else 1024))
    for name in spec.get("dtypes") or (["bfloat16", "float16", "float32"] if device == "cuda" else ["float32"]):
        dt = getattr(torch, name)
        a = torch.randn(n, n, device=device, dtype=dt)
        b = torch.randn(n, n, device=device, dtype=dt)
        out = torch.empty(n, n, device=device, dtype=dt)

        def mm(a: Any = a, b: Any = b, out: Any = out) -> None:
            torch.mm(a, b, out=out)

        for _ in range(3):
            mm()
        calls = _calls_for(torch, device, mm, target)
        samples = [2 * n**3 / _timer(torch, device, mm, calls) / 1e12 for _ in range(repeats)]
        matmul[name], best[name] = statistics.median(samples), max(samples)
        del a, b, out
    nbytes = int(spec.get("copy_bytes") or ((1 << 30) if device == "cuda" else (256 << 20)))
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)

    def copy() -> None:
        dst.copy_(src)

    for _ in range(3):
        copy()
    calls = _calls_for(torch, device, copy, target)
    bw = [2 * nbytes / _timer(torch, device, copy, calls) / 1e9 for _ in range(repeats)]  # read + write
    keep = {k: env.get(k) for k in ("device", "gpu", "capability", "cpu", "cpu_count", "torch", "cuda")}
    return {
        "environment": keep,
        "entry": {
            "device": env.get("gpu") if device == "cuda" else env.get("cpu"),
            "kind": device,
            "matmul_tflops": matmul,
            "matmul_tflops_best": best,
            "copy_gbps": statistics.median(bw),
            "copy_gbps_best": max(bw),
            "method": {"matmul": f"torch.mm {n}x{n}x{n} on random data, median of {repeats} samples",
                       "copy": f"Tensor.copy_ of {nbytes} bytes, read + written bytes per second, median of "
                               f"{repeats} samples", "threads": torch.get_num_threads()},
            "torch": torch.__version__,
            "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        },
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(argv[0])
    print("@@calibration " + json.dumps(measure(spec)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
