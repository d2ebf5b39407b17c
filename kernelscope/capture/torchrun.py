"""torchrun's command-line options for ``profile --nproc``. No torch import: the parent builds them.

One host: ``--standalone`` (torchrun picks a free port and a local rendezvous). Several hosts: the rendezvous
options, the same on every host but ``--node-rank``, passed through to torchrun unchanged.
"""

from __future__ import annotations

from kernelscope.errors import UsageError


def rendezvous_args(nproc: int | None, *, nnodes: str | None = None, node_rank: int | None = None,
                    rdzv_backend: str | None = None, rdzv_endpoint: str | None = None,
                    rdzv_id: str | None = None) -> tuple[str, ...]:
    given = {"--nnodes": nnodes, "--node-rank": node_rank, "--rdzv-backend": rdzv_backend,
             "--rdzv-endpoint": rdzv_endpoint, "--rdzv-id": rdzv_id}
    used = {k: v for k, v in given.items() if v is not None}
    if used and not nproc:
        raise UsageError(f"{next(iter(used))} is a torchrun option, and this run does not use torchrun",
                         "add --nproc N (ranks per host)")
    if not nproc:
        return ()
    if not used:
        return ("--standalone",)
    multi = nnodes not in (None, "1", "1:1")
    if multi and rdzv_endpoint is None:
        raise UsageError(f"--nnodes {nnodes} needs --rdzv-endpoint HOST:PORT (where the hosts meet)",
                         "pass --rdzv-endpoint (and --rdzv-backend c10d --rdzv-id ID) on every host")
    args: list[str] = []
    for k, v in used.items():
        args += [k, str(v)]
    return tuple(args)
