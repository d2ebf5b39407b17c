"""Record real kernelscope captures on a GPU machine (used for tests/data/h200-*-kernelscope).

Runs the capture layer (one subprocess per mode, exactly what `kernelscope profile` runs) for each model and
packs each run's capture.json, trace, Inductor code and log into $OUT/captures.tar.gz.
Usage on the device: python3 benchmarks/h200_capture.py [NAME ...]
"""

from __future__ import annotations

import os
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernelscope.capture.modes import parse_modes  # noqa: E402
from kernelscope.capture.runner import CaptureOptions, run_mode  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RUNS = {
    "linear_gelu": ("samples/linear_gelu.py", None,
                    "eager,default,max-autotune,reduce-overhead,max-autotune:TRITON,max-autotune:ATEN"),
    "mlp": ("samples/mlp.py", "bfloat16", "eager,default,max-autotune"),
    "transformer_block": ("samples/transformer_block.py", "bfloat16", "eager,default,max-autotune"),
    "addmm_activation": ("tests/models/addmm_activation.py", "float16", "eager,default"),
    "prologue": ("tests/models/prologue.py", None, "eager,max-autotune:TRITON"),
    "prologue_fused": ("tests/models/prologue_fused.py", None, "eager,max-autotune:TRITON,max-autotune"),
    "prologue_forced": ("tests/models/prologue_forced.py", None, "eager,max-autotune:TRITON"),
}


def main() -> None:
    out = Path(os.environ.get("OUT", "/tmp/out"))
    work = Path("/tmp/ks-captures")
    names = sys.argv[1:] or list(RUNS)
    for name in names:
        model, dtype, modes = RUNS[name]
        opts = CaptureOptions(model=str(ROOT / model), sets={}, dtype=dtype, device="cuda", timeout_s=300,
                              repeats=30)
        for mode in parse_modes(modes):
            t0 = time.time()
            rec = run_mode(mode, opts, work / name)
            lat = rec.latency_ms.median if rec.latency_ms is not None else None
            print(f"{name:18s} {mode.name:22s} {rec.status:11s} {time.time() - t0:6.1f}s first={rec.first_call_s} "
                  f"median_ms={lat} err={rec.max_abs_error} {rec.error[:300]} {list(rec.notes)}",
                  flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "captures.tar.gz", "w:gz") as tar:
        for path in sorted(work.rglob("*")):
            if path.is_file() and ".inductor-cache" not in path.parts:
                tar.add(path, arcname=str(path.relative_to(work)))


if __name__ == "__main__":
    main()
