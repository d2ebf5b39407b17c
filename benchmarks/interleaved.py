"""kernelscope's timing code against the hand script's, on one compiled callable, in one process, taking turns.
(issue 13: is kernelscope's steady median within 3 % of an independent CUDA-event timing?)

On the shared H200 a launch-bound model's per-call time moves between levels (e.g. 31 and 46 µs) that last
seconds (benchmarks/window_length.py), so two timings in different processes, or minutes apart, differ by that much
whatever their method. Here both methods time the same callable in the same process on the same CPU, in
alternating blocks a fraction of a second apart (ABBA order), so both see the same level; what is left of their
difference is the method's.

Each fresh process (one per mode and round): benchmarks/hand_timing.py's build, first call and warm-up, then
kernelscope's CPU choice (capture/pinning.py ``_pin_fastest_cpu``), then ``--blocks`` rounds of
- kernelscope: the sample count from single calls and back-to-back samples (``_batched_estimate``,
  ``calls_per_sample``), then its timed window (``_steady_samples``, 30 samples, retimed while drifting);
- hand: 30 samples of the hand script's k calls between two CUDA events (hand_timing.py's ``timed``);
each block's median kept. Report: per mode, the ratio kernelscope / hand of every adjacent pair of blocks, their
median per process and pooled with a 95 % bootstrap interval (processes resampled, then blocks in each).

    python benchmarks/interleaved.py run samples/linear_gelu.py --modes eager,default --processes 3 --json I.jsonl
    python benchmarks/interleaved.py report I.jsonl
"""

from __future__ import annotations

import json
import math
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hand_timing import experiment  # noqa: E402


def worker(model: str, mode: str, device: str, blocks: int, sets: list[str]) -> dict:
    import torch
    from hand_timing import build, warm

    from kernelscope.capture.pinning import _pin_fastest_cpu
    from kernelscope.capture.timing import _batched_estimate, _steady_samples, _Timer, calls_per_sample

    fn, inputs, timed, sync = build(model, mode, device, sets)
    _first, k_hand = warm(fn, inputs, mode, sync, timed)
    timer = _Timer(torch, device)

    def call() -> object:
        return fn(*inputs)

    out: dict = {"mode": mode, "k_hand": k_hand, "ks": [], "hand": [], "k_ks": []}
    with torch.no_grad():
        pinned = _pin_fastest_cpu(timer, call, k_hand) if device == "cuda" else None
        out["cpu"] = pinned and pinned["cpu"]
        for b in range(blocks):
            for side in (("ks", "hand") if b % 2 == 0 else ("hand", "ks")):
                if side == "hand":
                    out["hand"].append(statistics.median(timed(k_hand) for _ in range(30)))
                    continue
                single = statistics.median(timer.time(call, 1) for _ in range(5))
                inner = calls_per_sample(_batched_estimate(timer, call, single))
                samples, _windows, _drift = _steady_samples(timer, call, inner, 30, budget_s=10.0)
                out["ks"].append(statistics.median(samples))
                out["k_ks"].append(inner)
    return out


def _log_ratios(rec: dict) -> list[float]:
    return [math.log(a / b) for a, b in zip(rec["ks"], rec["hand"], strict=True)]


def report(path: str, seed: int = 0) -> None:
    recs = [json.loads(ln) for ln in open(path) if ln.strip()]
    rng = random.Random(seed)
    for mode in dict.fromkeys(r["mode"] for r in recs):
        per = [_log_ratios(r) for r in recs if r["mode"] == mode]
        print(f"\n{mode}: {len(per)} processes")
        print("| process | kernelscope median of blocks (µs) | hand (µs) | k kernelscope / hand | ratio (median of "
              "adjacent blocks) | per-block ratios |")
        print("| ---: | ---: | ---: | ---: | ---: | --- |")
        for i, (r, lr) in enumerate(zip([r for r in recs if r["mode"] == mode], per, strict=True), 1):
            print(f"| {i} | {statistics.median(r['ks']) * 1e3:.1f} | {statistics.median(r['hand']) * 1e3:.1f} | "
                  f"{statistics.median(r['k_ks'])} / {r['k_hand']} | {math.exp(statistics.median(lr)):.3f} | "
                  f"{', '.join(f'{math.exp(x):.3f}' for x in lr)} |")
        pooled = statistics.median(x for lr in per for x in lr)
        boots = []
        for _ in range(2000):
            draw = [x for lr in (rng.choice(per) for _ in per) for x in (rng.choice(lr) for _ in lr)]
            boots.append(statistics.median(draw))
        boots.sort()
        lo, hi = math.exp(boots[int(0.025 * len(boots))]), math.exp(boots[int(0.975 * len(boots)) - 1])
        verdict = "met" if 0.97 <= lo and hi <= 1.03 else ("not met" if hi < 0.97 or lo > 1.03 else "not resolved")
        print(f"\npooled ratio kernelscope / hand: {math.exp(pooled):.3f} (95% {lo:.3f}-{hi:.3f}); "
              f"target within 3%: {verdict}")


def main() -> None:
    experiment(__file__, "interleaved", 3, "blocks", 10, worker, report,
               lambda rec: f"ratio {math.exp(statistics.median(_log_ratios(rec))):.3f}")


if __name__ == "__main__":
    main()
