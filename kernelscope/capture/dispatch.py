"""The GEMMs one call of the mode dispatches, counted by a ``TorchDispatchMode``: the oracle the analysis checks its
own GEMM count against, independent of kernelscope's reading of traces and output code.

One more call after the timed samples and the profile (outside the profiler, under no_grad as every call of the
run). The mode counts each GEMM-class ATen op it sees (``vocab.DISPATCH_GEMM_OPS``) by overload packet, as the zoo
suite's ``count_gemm_ops`` does, and every op it sees by its qualified packet name (``ops``). An op that is not
GEMM-class runs below the Python key with the mode still on, so the GEMMs it dispatches inside are seen too and
counted under it (``nested``): a custom op (transformers' ``grouped_mm_fallback`` runs one ``mm`` per expert), ATen's
fused ``_native_multi_head_attention`` (nn.MultiheadAttention's eval fast path). A GEMM-class op is not looked into
(``convolution`` counts once, not again as the ``_convolution`` it calls).

Compiled modes: the mode declares ``ignore_compile_internals``, with which Dynamo runs the compiled code under it;
without it Dynamo skips every frame under a dispatch mode and the call runs eager. What the compiled code still
dispatches is counted: the output code's extern GEMM calls, custom ops and their inner GEMMs. Nothing is counted
(``skipped`` says why) on a torch without ``ignore_compile_internals``, under CUDA graphs (a replay dispatches
nothing), or when the call compiled a frame (its ops were traced, not run as compiled).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from kernelscope.vocab import DISPATCH_GEMM_OPS

# Collectives are run as they are, not looked into: their kernels wait on the other ranks of a torchrun group.
_COLLECTIVES = frozenset({"c10d", "_c10d_functional", "c10d_functional", "_dtensor"})


def count_dispatch(torch: Any, call: Callable[[], Any], *, compiled: bool, cudagraphs: bool) -> dict[str, Any]:
    """capture.json's ``dispatch``: one ``call()`` counted (``gemm_ops``, ``nested``, ``ops``), or ``skipped``."""
    from torch.utils._python_dispatch import TorchDispatchMode

    if cudagraphs:
        return {"skipped": "the call replays a CUDA graph: nothing dispatches"}
    if compiled and not hasattr(TorchDispatchMode, "ignore_compile_internals"):
        return {"skipped": f"torch {torch.__version__} runs a compiled model eager under a dispatch mode "
                           "(no TorchDispatchMode.ignore_compile_internals)"}
    counter = _counter(torch, TorchDispatchMode)
    before = _frames() if compiled else None
    with counter:
        call()
    if compiled and _frames() != before:
        return {"skipped": "the counting call compiled a frame: its ops were traced, not run as compiled"}
    counted: dict[str, Any] = counter.record()
    return counted


def _frames() -> tuple[int, int]:
    """Dynamo's frames compiled and graphs made so far in this process."""
    from torch._dynamo.utils import counters

    return int(counters["frames"].get("total", 0)), int(counters["stats"].get("unique_graphs", 0))


def _counter(torch: Any, base: type) -> Any:
    """A TorchDispatchMode that counts (a class of ``base``, made here: torch is imported only by the worker)."""
    below_python = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.Python)

    class Count(base):  # type: ignore[misc]
        @classmethod
        def ignore_compile_internals(cls) -> bool:
            return True  # Dynamo runs the compiled code under the mode instead of skipping to eager

        def __init__(self) -> None:
            super().__init__()
            self.gemms: collections.Counter[str] = collections.Counter()
            self.nested: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
            self.ops: collections.Counter[str] = collections.Counter()
            self.outer: list[str] = []  # the ops being looked into, outermost first

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            name = func.overloadpacket.__name__
            qualified = f"{func.namespace}::{name}"
            if not self.outer:
                self.ops[qualified] += 1
            if func.namespace == "aten" and name in DISPATCH_GEMM_OPS:
                if self.outer:
                    self.nested[self.outer[0]][name] += 1
                else:
                    self.gemms[name] += 1
                return func(*args, **kwargs)
            # not looked into again inside itself (aten::detach's kernel dispatches aten::detach: no end to it)
            looked = func.namespace not in _COLLECTIVES and qualified not in self.outer
            keys = _dispatch_keys(torch, func, args, kwargs) if looked else None
            if keys is None:
                return func(*args, **kwargs)
            self.outer.append(qualified)
            try:
                with self:  # the op's own kernel, below this mode; what it dispatches comes back here
                    return func.redispatch(keys & below_python, *args, **kwargs)
            finally:
                self.outer.pop()

        def record(self) -> dict[str, Any]:
            return {"gemm_ops": dict(sorted(self.gemms.items())),
                    "nested": {k: dict(sorted(v.items())) for k, v in sorted(self.nested.items())},
                    "ops": dict(sorted(self.ops.items()))}

    return Count()


def _dispatch_keys(torch: Any, func: Any, args: Any, kwargs: Any) -> Any:
    """The dispatch keys of the op's tensor arguments, or None where the op is run as it is, not looked into: it
    has no tensor argument, one of its tensor arguments holds a number (a scalar the dispatcher wrapped: a boxed
    redispatch takes no number for a tensor), or a tensor subclass with its own ``__torch_dispatch__`` (DTensor)."""
    tensors = []
    schema = func._schema
    given = [*zip((a for a in schema.arguments if not a.kwarg_only), args),
             *((a, kwargs[a.name]) for a in schema.arguments if a.name in kwargs)]
    for arg, value in given:
        kind = arg.type
        if isinstance(kind, torch._C.OptionalType):
            kind = kind.getElementType()
        if isinstance(kind, torch._C.ListType):
            values, kind = list(value or ()), kind.getElementType()
            if isinstance(kind, torch._C.OptionalType):
                kind = kind.getElementType()
        else:
            values = [value]
        if not isinstance(kind, torch._C.TensorType):
            continue
        for v in values:
            if v is None:
                continue
            if not isinstance(v, torch.Tensor):
                return None
            tensors.append(v)
    if not tensors:
        return None
    keys = torch._C._dispatch_keys(tensors[0])
    for t in tensors[1:]:
        keys = keys | torch._C._dispatch_keys(t)
    if keys.has(torch._C.DispatchKey.Python):
        return None
    return keys
