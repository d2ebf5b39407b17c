"""Why max-autotune's later processes tune Triton kernels again (issue 27 part 2, session 19).

On the H200 the later max-autotune processes of `kernelscope profile` load the first process's compile from the FX
graph cache (fxgraph_cache_hit 1), yet their first call spends 11-13 s in CachingAutotuner.coordinate_descent_tuning.
Coordinate descent's result is meant to be cached beside each kernel (``<kernel dir>/<key>.best_config``,
``found_by_coordesc``) and read back before a kernel runs (triton_heuristics.check_autotune_cache). This script finds
out which kernels are tuned again and why, with no kernelscope code:

1. ``first``: a fresh Inductor + Triton cache (as kernelscope gives each mode), compile a small Llama with
   ``max-autotune-no-cudagraphs``, call it. Every coordinate-descent run (where it ran: inside the compile's fusion
   benchmarks or at the compiled module's first run), every autotune-cache read and save is recorded.
2. The cache folder is copied.
3. ``later``: the same cache, ``compile_threads`` 1 (as kernelscope's later processes), the same compile and call.
4. ``later-pool`` (with ``--pool``): the copy, torch's own ``compile_threads``.
5. ``later-kept`` (with ``--kept``): a second copy, ``compile_threads`` 1, with kernelscope's own change installed
   (capture/compiling.py ``_keep_cached_coordesc``, as its later processes run it): it should tune nothing again.

Prints one JSON line per process and a summary: which kernels the later processes tuned, and whether the first
process had saved a ``.best_config`` for them (and with ``found_by_coordesc``).

    python benchmarks/coordesc_repeat.py [--layers 2] [--hidden 512] [--seq 256] [--pool] [--kept] [--out DIR]

(DIR gets first.json, later.json, later-pool.json, later-kept.json and summary.json, each as soon as it is
known.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path


def best_configs(cache: Path) -> dict[str, dict]:
    """Every .best_config under the Inductor cache: relative path -> (found_by_coordesc, mtime)."""
    out = {}
    for p in sorted(cache.rglob("*.best_config")):
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError):
            data = {}
        out[str(p.relative_to(cache))] = {"coordesc": bool(data.get("found_by_coordesc")),
                                          "mtime": round(p.stat().st_mtime, 3)}
    return out


def worker(role: str, cache: Path, layers: int, hidden: int, seq: int, threads1: bool, device: str,
           keep_coordesc: bool = False) -> dict:
    import torch
    import torch._inductor.config as iconfig
    from torch._dynamo.utils import counters
    from torch._inductor.runtime import autotune_cache as ac
    from torch._inductor.runtime import triton_heuristics as th
    from transformers import LlamaConfig, LlamaForCausalLM

    if threads1:
        iconfig.compile_threads = 1
    if keep_coordesc:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from kernelscope.capture.compiling import _COORDESC_KEPT, _keep_cached_coordesc

        if _keep_cached_coordesc() is None:
            raise SystemExit("this torch has no CachingAutotuner.recheck_autotune_cache to wrap")
    events: dict[str, list] = {"coordesc": [], "read": [], "save": []}
    idle = [0]  # coordinate_descent_tuning calls that tuned nothing (a tuned or ineligible kernel)

    def where() -> str:
        names = {f.name for f in traceback.extract_stack()}
        if names & {"benchmark_codegened_module", "benchmark_fused_nodes", "benchmark_combo_kernel"}:
            return "compile-benchmark"
        if "compile_fx_inner" in names or "fx_codegen_and_compile" in names:
            return "compile"
        return "run"

    def kname(self) -> str:
        meta = getattr(self, "inductor_meta", {}) or {}
        return str(meta.get("kernel_name") or getattr(getattr(self, "fn", None), "__name__", "?"))

    orig_cd = th.CachingAutotuner.coordinate_descent_tuning

    def cd(self, launcher, *a, **k):
        before = counters["inductor"]["coordesc_tuning_bench"]
        t0 = time.perf_counter()
        out = orig_cd(self, launcher, *a, **k)
        if counters["inductor"]["coordesc_tuning_bench"] == before:
            idle[0] += 1
            return out
        events["coordesc"].append({
            "kernel": kname(self), "file": os.path.relpath(self.filename, cache) if self.filename else None,
            "where": where(), "benches": counters["inductor"]["coordesc_tuning_bench"] - before,
            "s": round(time.perf_counter() - t0, 4), "save_hook": self.save_cache_hook is not None,
            "cache_info": {k2: str(v) for k2, v in (getattr(self, "autotune_cache_info", None) or {}).items()}})
        return out

    th.CachingAutotuner.coordinate_descent_tuning = cd

    orig_read = ac.AutotuneCache.read_best

    def read_best(self, *a, **k):
        got = orig_read(self, *a, **k)
        key = self.local_cache[1] if self.local_cache else None
        events["read"].append({"key": os.path.relpath(key, cache) if key else None, "hit": got is not None,
                               "coordesc": bool(getattr(got, "found_by_coordesc", False)), "where": where()})
        return got

    ac.AutotuneCache.read_best = read_best
    orig_save = ac.AutotuneCache.save

    def save(self, config, time_taken_ns, found_by_coordesc=False, *a, **k):
        key = self.local_cache[1] if self.local_cache else None
        events["save"].append({"key": os.path.relpath(key, cache) if key else None,
                               "coordesc": bool(found_by_coordesc), "where": where()})
        return orig_save(self, config, time_taken_ns, found_by_coordesc, *a, **k)

    ac.AutotuneCache.save = save

    torch.manual_seed(0)
    heads = max(1, hidden // 64)
    cfg = LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                      num_key_value_heads=max(1, heads // 4), intermediate_size=4 * hidden,
                      vocab_size=8192, max_position_embeddings=2048,
                      attn_implementation="sdpa", tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg).eval().to(device, torch.bfloat16)
    ids = torch.randint(0, 8192, (1, seq), generator=torch.Generator().manual_seed(1)).to(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    fn = torch.compile(model, mode="max-autotune-no-cudagraphs")
    t0 = time.perf_counter()
    with torch.no_grad():
        fn(input_ids=ids, attention_mask=torch.ones_like(ids))
        sync()
        first = time.perf_counter() - t0
        fn(input_ids=ids, attention_mask=torch.ones_like(ids))
        sync()
    ind = counters["inductor"]
    return {"role": role, "torch": torch.__version__, "compile_threads": iconfig.compile_threads,
            "first_call_s": round(first, 2),
            "counters": {k: ind[k] for k in ("fxgraph_cache_hit", "fxgraph_cache_miss", "coordesc_tuning_bench",
                                             "select_algorithm_autotune") if ind[k]},
            "coordesc_s": round(sum(e["s"] for e in events["coordesc"]), 3), "coordesc_idle_calls": idle[0],
            **({"coordesc_kept": _COORDESC_KEPT[0]} if keep_coordesc else {}),
            "events": events, "best_configs": best_configs(cache)}


def run_role(role: str, cache: Path, args: argparse.Namespace, threads1: bool, keep: bool = False) -> dict:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), TRITON_CACHE_DIR=str(cache / "triton"),
               PYTHONUNBUFFERED="1")
    cmd = [sys.executable, __file__, "--worker", role, "--cache", str(cache), "--layers", str(args.layers),
           "--hidden", str(args.hidden), "--seq", str(args.seq), "--device", args.device]
    cmd += ["--threads1"] if threads1 else []
    cmd += ["--keep"] if keep else []
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    line = [x for x in p.stdout.splitlines() if x.startswith("@@coordesc ")]
    if p.returncode or not line:
        return {"role": role, "rc": p.returncode, "stderr": p.stderr[-3000:]}
    rec = json.loads(line[-1][len("@@coordesc "):])
    rec["wall_s"] = round(time.perf_counter() - t0, 1)
    return rec


def summary(first: dict, later: dict) -> dict:
    """The later process's coordinate-descent runs, against what the first process saved."""
    saved = first.get("best_configs", {})
    rows = []
    for e in later.get("events", {}).get("coordesc", []):
        if not e["benches"]:
            continue
        kdir = os.path.dirname(e["file"]) if e["file"] else None
        had = [k for k in saved if kdir is not None and os.path.dirname(k) == kdir]
        reads = [r for r in later["events"]["read"] if r["key"] and os.path.dirname(r["key"]) == kdir]
        rows.append({"kernel": e["kernel"], "s": e["s"], "where": e["where"], "benches": e["benches"],
                     "first_saved_in_dir": [(k, saved[k]["coordesc"]) for k in had][:3],
                     "later_reads_in_dir": reads[:3], "cache_info": e["cache_info"]})
    first_cd = [e for e in first.get("events", {}).get("coordesc", []) if e["benches"]]
    return {"later_tuned": len(rows), "later_tuned_s": round(sum(r["s"] for r in rows), 2),
            "first_tuned_by_where": {w: sum(1 for e in first_cd if e["where"] == w)
                                     for w in {e["where"] for e in first_cd}},
            "first_saves_by_where": {w: sum(1 for e in first.get("events", {}).get("save", []) if e["where"] == w)
                                     for w in {e["where"] for e in first.get("events", {}).get("save", [])}},
            "first_best_configs": len(saved),
            "first_best_configs_coordesc": sum(1 for v in saved.values() if v["coordesc"]),
            "later_reads": {"hit": sum(1 for r in later.get("events", {}).get("read", []) if r["hit"]),
                            "miss": sum(1 for r in later.get("events", {}).get("read", []) if not r["hit"])},
            "rows": rows[:40]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker")
    ap.add_argument("--cache")
    ap.add_argument("--threads1", action="store_true")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out", default=None)
    ap.add_argument("--pool", action="store_true", help="also a later process with torch's own compile_threads")
    ap.add_argument("--kept", action="store_true", help="also a later process with kernelscope's change installed")
    ap.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    if args.worker:
        rec = worker(args.worker, Path(args.cache), args.layers, args.hidden, args.seq, args.threads1, args.device,
                     args.keep)
        print("@@coordesc " + json.dumps(rec), flush=True)
        return 0
    root = Path(tempfile.mkdtemp(prefix="coordesc-"))
    cache, copy = root / "cache", root / "copy"
    cache.mkdir()
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)

    def keep(name: str, data: dict) -> None:  # each record as soon as it is there: a killed run keeps them
        if out:
            (out / f"{name}.json").write_text(json.dumps(data))

    recs = [run_role("first", cache, args, False)]
    keep("first", recs[0])
    print(json.dumps({k: v for k, v in recs[0].items() if k not in ("events", "best_configs")}), flush=True)
    shutil.copytree(cache, copy)
    kept_copy = root / "copy-kept"
    shutil.copytree(cache, kept_copy)
    roles = [("later", cache, True, False)] + ([("later-pool", copy, False, False)] if args.pool else []) + \
        ([("later-kept", kept_copy, True, True)] if args.kept else [])
    for role, dir_, threads1, keep_it in roles:
        recs.append(run_role(role, dir_, args, threads1, keep_it))
        keep(role, recs[-1])
        print(json.dumps({k: v for k, v in recs[-1].items() if k not in ("events", "best_configs")}), flush=True)
        keep("summary", {r["role"]: summary(recs[0], r) for r in recs[1:]})
    print(json.dumps({r["role"]: summary(recs[0], r) for r in recs[1:]}, indent=1)[:6000], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
