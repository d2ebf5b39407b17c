"""Mode definitions: what each --modes name means. Pure data (no torch), so the CLI validates before capture.

Names: eager, default, max-autotune, reduce-overhead, dynamic (``torch.compile(dynamic=True)``: one process meets
every shape point of a sweep, so its recompilations are counted), and ``max-autotune:B1+B2`` to pin the GEMM
backends of one max-autotune mode (e.g. ``max-autotune:TRITON`` and ``max-autotune:ATEN`` side by side in one run).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelscope import vocab
from kernelscope.errors import UsageError

GEMM_BACKENDS = vocab.GEMM_BACKENDS
BASE_MODES = ("eager", "default", "max-autotune", "reduce-overhead", "dynamic")


@dataclass(frozen=True, slots=True)
class ModeDef:
    name: str
    compiled: bool
    compile_mode: str | None  # torch.compile(mode=...)
    max_autotune: bool
    cudagraphs: bool
    gemm_backends: tuple[str, ...] | None = None  # None: Inductor's default list
    needs_cuda: bool = False
    inductor_config: dict[str, object] = field(default_factory=dict)
    dynamic: bool = False  # torch.compile(dynamic=True); one worker runs every shape point

    @property
    def dirname(self) -> str:
        # Used in paths: keep it to letters, digits, '-', '_' and '.'.
        return self.name.replace(":", "_").replace("+", "-")


def parse_backends(text: str | None) -> tuple[str, ...] | None:
    if text is None or not text.strip():
        return None
    names = tuple(b.strip().upper() for b in text.replace("+", ",").split(",") if b.strip())
    bad = [b for b in names if b not in GEMM_BACKENDS]
    if bad:
        raise UsageError(
            f"unknown GEMM backend {bad[0]!r}",
            f"use a comma-separated list of {', '.join(GEMM_BACKENDS)}",
        )
    return names


def parse_modes(text: str, gemm_backends: tuple[str, ...] | None = None) -> list[ModeDef]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise UsageError("--modes is empty", f"pass a comma-separated list of {', '.join(BASE_MODES)}")
    out: list[ModeDef] = []
    seen: set[str] = set()
    for name in names:
        base, _, pinned = name.partition(":")
        if base not in BASE_MODES:
            raise UsageError(
                f"unknown mode {name!r}",
                f"use {', '.join(BASE_MODES)} (or max-autotune:BACKEND+BACKEND)",
            )
        if pinned and base != "max-autotune":
            raise UsageError(f"mode {name!r}: only max-autotune takes pinned GEMM backends",
                             "write max-autotune:TRITON+ATEN")
        if name in seen:
            raise UsageError(f"mode {name!r} is listed twice", "list each mode once")
        seen.add(name)
        if base == "eager":
            out.append(ModeDef(name, compiled=False, compile_mode=None, max_autotune=False, cudagraphs=False))
        elif base == "default":
            out.append(ModeDef(name, compiled=True, compile_mode=None, max_autotune=False, cudagraphs=False))
        elif base == "dynamic":
            out.append(ModeDef(name, compiled=True, compile_mode=None, max_autotune=False, cudagraphs=False,
                               dynamic=True))
        elif base == "reduce-overhead":
            out.append(
                ModeDef(name, compiled=True, compile_mode="reduce-overhead", max_autotune=False, cudagraphs=True,
                        needs_cuda=True)
            )
        else:
            backends = parse_backends(pinned) if pinned else gemm_backends
            out.append(
                ModeDef(
                    name,
                    compiled=True,
                    compile_mode="max-autotune-no-cudagraphs",
                    max_autotune=True,
                    cudagraphs=False,
                    gemm_backends=backends,
                )
            )
    return out
