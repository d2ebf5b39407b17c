"""Mode definitions: what each --modes name means. Pure data (no torch), so the CLI validates before capture.

Names: eager, default, max-autotune, reduce-overhead, dynamic (``torch.compile(dynamic=True)``: one process meets
every shape point of a sweep, so its recompilations are counted), and ``max-autotune:B1+B2`` to pin the GEMM
backends of one max-autotune mode (e.g. ``max-autotune:TRITON`` and ``max-autotune:ATEN`` side by side in one run).
A compiled mode's name may end in Inductor options for that mode alone, ``@NAME=VALUE`` (kernelscope/mode_names.py:
``max-autotune:TRITON@benchmark_epilogue_fusion=off``, ``max-autotune:CPP@freezing=on``); the worker patches them
into Inductor's configuration over the run's own (``--freezing``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from kernelscope import vocab
from kernelscope.errors import UsageError
from kernelscope.mode_names import split_options

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
    inductor_config: dict[str, object] = field(default_factory=dict)  # the name's @NAME=VALUE options
    dynamic: bool = False  # torch.compile(dynamic=True); one worker runs every shape point

    @property
    def dirname(self) -> str:
        # Used in paths: keep it to letters, digits, '-', '_' and '.'.
        return self.name.replace(":", "_").replace("+", "-").replace("@", ".").replace("=", "-")


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
        head, options = split_options(name)
        base, _, pinned = head.partition(":")
        if base not in BASE_MODES:
            raise UsageError(
                f"unknown mode {name!r}",
                f"use {', '.join(BASE_MODES)} (or max-autotune:BACKEND+BACKEND)",
            )
        if pinned and base != "max-autotune":
            raise UsageError(f"mode {name!r}: only max-autotune takes pinned GEMM backends",
                             "write max-autotune:TRITON+ATEN")
        if options and base == "eager":
            raise UsageError(f"mode {name!r}: eager compiles nothing, so it takes no Inductor option",
                             "give options to a compiled mode, e.g. default@freezing=on")
        if name in seen:
            raise UsageError(f"mode {name!r} is listed twice", "list each mode once")
        seen.add(name)
        mode = _base_mode(name, base, pinned, gemm_backends)
        out.append(dataclasses.replace(mode, inductor_config=dict(options)) if options else mode)
    return out


def _base_mode(name: str, base: str, pinned: str, gemm_backends: tuple[str, ...] | None) -> ModeDef:
    """What a base mode (with its pinned backends) means."""
    if base == "eager":
        return ModeDef(name, compiled=False, compile_mode=None, max_autotune=False, cudagraphs=False)
    if base == "default":
        return ModeDef(name, compiled=True, compile_mode=None, max_autotune=False, cudagraphs=False)
    if base == "dynamic":
        return ModeDef(name, compiled=True, compile_mode=None, max_autotune=False, cudagraphs=False, dynamic=True)
    if base == "reduce-overhead":
        return ModeDef(name, compiled=True, compile_mode="reduce-overhead", max_autotune=False, cudagraphs=True,
                       needs_cuda=True)
    backends = parse_backends(pinned) if pinned else gemm_backends
    return ModeDef(name, compiled=True, compile_mode="max-autotune-no-cudagraphs", max_autotune=True,
                   cudagraphs=False, gemm_backends=backends)
