"""The worker under torchrun (``profile --nproc N``): one rank of a process group.

torchrun (``python -m torch.distributed.run``) starts N copies of the worker with RANK, WORLD_SIZE, LOCAL_RANK
and MASTER_ADDR/PORT in their environment; each initialises the process group (``env://``; NCCL on CUDA, gloo on
the CPU) BEFORE the model file builds its model, so the model can shard itself with ``torch.distributed`` (tensor
parallel, DDP or FSDP wrapping). Every rank measures and profiles; each writes its own capture record into
``<mode dir>/rank-<r>/`` and its own trace, named ``kernelscope_rank_<r>.<ts>.pt.trace.json.gz``.

Ranks of a tensor-parallel model meet in a collective at every call, so every rank must make the same number of
calls: the worker's data-dependent loops (warm-up until stable, windows that drifted, calls per sample) take
their decisions together through ``Group.agree_*`` (one small all_reduce per decision).

Standard library and torch only (this module is shipped to other interpreters with the worker).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

TRACE_PREFIX = "kernelscope_rank_"  # + rank: torch-tb-profiler reads "<worker>.<span>.pt.trace.json.gz"


def rank_from_env() -> tuple[int, int, int] | None:
    """(rank, world size, local rank) from torchrun's environment; None outside torchrun."""
    try:
        return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ.get("LOCAL_RANK", "0"))
    except (KeyError, ValueError):
        return None


def rank_dir(mode_dir: str, rank: int) -> str:
    return str(Path(mode_dir) / f"rank-{rank}")


def trace_worker_name(rank: int) -> str:
    return f"{TRACE_PREFIX}{rank}"


def prepare_rank(spec: dict[str, Any], points: list[dict[str, Any]]) -> int:
    """Before torch is imported: the rank's own folders, log and Inductor/Triton caches. Returns the rank.

    stderr goes to ``rank-<r>/log.txt`` (the fusion and autotune logs the analysis reads are per rank; all ranks
    in one file would interleave them); each rank compiles into its own cache, so its first call is a cold
    compile too, and a later process of ``--processes`` finds that rank's cache at the same path."""
    env = rank_from_env()
    if env is None:
        raise RuntimeError("the spec asks for a torchrun rank, but RANK/WORLD_SIZE are not set "
                           "(the worker was not started by torchrun)")
    rank = env[0]
    for p in points:
        p["mode_dir"] = rank_dir(p["mode_dir"], rank)
        Path(p["mode_dir"]).mkdir(parents=True, exist_ok=True)
    spec["mode_dir"] = points[0]["mode_dir"]
    log = Path(points[0]["mode_dir"]) / ("log-warm.txt" if spec.get("compile_only") else "log.txt")
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)
    spec["rank_log"] = str(log.relative_to(spec["out_dir"]))
    if not spec.get("user_cache_dir"):
        for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
            if os.environ.get(var):
                os.environ[var] = os.path.join(os.environ[var], f"rank-{rank}")
    return rank


class Group:
    """The initialised process group of this rank, and the worker's collective decisions."""

    def __init__(self, torch: Any, device: str, timeout_s: float):
        import datetime

        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        rank, world, local = rank_from_env() or (0, 1, 0)
        self.backend = "nccl" if device == "cuda" else "gloo"
        if device == "cuda":
            torch.cuda.set_device(local % max(1, torch.cuda.device_count()))
        # env:// from torchrun; the timeout bounds a collective that a failed rank never joins (torchrun stops
        # the group first, normally).
        dist.init_process_group(backend=self.backend, init_method="env://",
                                timeout=datetime.timedelta(seconds=max(60.0, timeout_s)))
        self.rank, self.world_size, self.local_rank = dist.get_rank(), dist.get_world_size(), local
        self.device = f"cuda:{torch.cuda.current_device()}" if device == "cuda" else "cpu"

    def describe(self) -> dict[str, Any]:
        return {"rank": self.rank, "world_size": self.world_size, "local_rank": self.local_rank,
                "backend": self.backend}

    def _reduce(self, values: list[float], op: Any) -> list[float]:
        t = self.torch.tensor(values, dtype=self.torch.float64, device=self.device)
        self.dist.all_reduce(t, op=op)
        return [float(v) for v in t.tolist()]

    def agree_stop(self, stable: bool, over_budget: bool) -> bool:
        """Stop a loop when every rank is stable or any rank ran out of time: one all_reduce."""
        s, o = self._reduce([float(stable), float(over_budget)], self.dist.ReduceOp.SUM)
        return s >= self.world_size or o > 0

    def agree_all(self, flag: bool) -> bool:
        return self._reduce([float(flag)], self.dist.ReduceOp.MIN)[0] > 0

    def agree_max(self, x: float) -> float:
        return self._reduce([x], self.dist.ReduceOp.MAX)[0]

    def barrier(self) -> None:
        self.dist.barrier()

    def close(self) -> None:
        try:
            if self.dist.is_initialized():
                self.dist.destroy_process_group()
        except Exception:  # noqa: BLE001 - a group a failed rank left behind: the process ends anyway
            pass
