"""The seed's hand-written timing next to kernelscope's, on the same model and machine.

The seed (the ad-hoc script users had before kernelscope) times eager and torch.compile with 10 warm-ups, then
100 iterations between two perf_counter reads (synchronizing on CUDA). This script runs that, then
`kernelscope profile` on the same model file, and prints per mode the ratio of kernelscope's median to the seed's
figure and kernelscope's spread (IQR / median).

    python benchmarks/seed_timing_vs_kernelscope.py samples/linear_gelu.py [--device cuda|cpu] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

SEED = r'''
import json, sys, time, torch
sys.path.insert(0, sys.argv[3])
from kernelscope import modelfile
spec = modelfile.inspect_model_file(sys.argv[1]); device = sys.argv[2]
modelfile.seed_everything(0)
model, inputs = modelfile.build(modelfile.load_module(spec, {}), spec)
model, inputs = modelfile.prepare(model, inputs, dtype=None, device=device)
def sync():
    if device == "cuda": torch.cuda.synchronize()
out = {}
with torch.no_grad():
    for name, fn in (("eager", model), ("default", torch.compile(model))):
        for _ in range(10): fn(*inputs)
        sync(); t0 = time.perf_counter()
        for _ in range(100): fn(*inputs)
        sync(); out[name] = (time.perf_counter() - t0) / 100 * 1000.0
print("SEED" + json.dumps(out))
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", default="/tmp/ks-seed-bench")
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    seed = subprocess.run([sys.executable, "-c", SEED, args.model, args.device, str(root)], capture_output=True,
                          text=True, check=True)
    seed_ms = json.loads(next(ln for ln in seed.stdout.splitlines() if ln.startswith("SEED"))[4:])
    t0 = time.time()
    ks = subprocess.run([sys.executable, "-m", "kernelscope", "profile", args.model, "--device", args.device,
                         "--modes", "eager,default", "--out", args.out, "--force"], capture_output=True, text=True)
    if ks.returncode != 0:
        sys.exit(f"kernelscope failed: {ks.stderr[-2000:]}")
    sys.path.insert(0, str(root))
    from kernelscope.result_file import load_result

    result = load_result(Path(args.out))
    env = result.environment
    print(f"model {args.model} on {env.gpu or env.cpu} (torch {env.torch}); "
          f"kernelscope wall {time.time() - t0:.0f} s")
    # kernelscope's speedup vs eager with its 95% bootstrap interval (the recommendation's candidates), next to
    # the seed's single ratio of two means: the seed cannot say whether its speedup is beyond noise.
    rec = result.recommendation[0] if result.recommendation else None
    cands = {c.mode: c for c in (rec.candidates if rec else ())}
    print(f"{'mode':10s} {'seed ms':>10s} {'ks median ms':>13s} {'ratio ks/seed':>14s} {'ks IQR/median':>14s} "
          f"{'seed speedup':>13s} {'ks speedup (95% CI)':>26s}")
    for m in result.modes:
        lat = m.latency_ms
        if lat is None:
            print(f"{m.name:10s} {m.status}: {m.error[:200]}")
            continue
        s = seed_ms[m.name]
        c = cands.get(m.name)
        ks_sp = "baseline" if m.name == "eager" else (
            f"{c.speedup:.3f} ({c.low:.3f}-{c.high:.3f}) {c.call}" if c is not None and c.low else "-")
        print(f"{m.name:10s} {s:10.4f} {lat.median:13.4f} {lat.median / s:14.3f} "
              f"{lat.iqr / lat.median:14.3f} {seed_ms['eager'] / s:13.3f} {ks_sp:>26s}")
    if rec is not None and rec.mode:
        print(f"kernelscope recommends {rec.mode}: {rec.reason}")


if __name__ == "__main__":
    main()
