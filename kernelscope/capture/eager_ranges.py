"""Eager mode's provenance while the profiler runs: profiler ranges for each submodule's forward
(``kernelscope.module:``), for the user's line of each GEMM-class call (``kernelscope.source:``) and for the
dataflow between calls (``kernelscope.flow:``). kernelscope/provenance.py reads them back from the trace.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelscope.provenance import (  # no torch import: the ranges' names, read back there
    FLOW_RANGE_PREFIX,
    MODULE_RANGE_PREFIX,
    SOURCE_RANGE_PREFIX,
)


def _module_ranges(torch: Any, model: Any) -> list[Any]:
    """Wrap every submodule's forward in a profiler range ``kernelscope.module: <path>`` (eager mode's module
    provenance: the ops a Linear runs lie inside its range). Returns the hook handles; the caller removes them.
    The root module gets no range (its path is empty: every op lies inside it)."""
    from torch.autograd.profiler import record_function

    from kernelscope.modelfile import user_model

    model = user_model(model)  # paths of the model get_model() returned (get_submodule finds them)
    if not isinstance(model, torch.nn.Module) or isinstance(model, torch.jit.ScriptModule):
        return []  # a ScriptModule refuses forward hooks: no module provenance, the profile itself still runs
    handles: list[Any] = []
    for path, module in model.named_modules():
        if not path or isinstance(module, torch.jit.ScriptModule):
            continue
        open_ranges: list[Any] = []  # a stack: a module called inside its own forward nests

        def pre(_mod: Any, _args: Any, *, name: str = MODULE_RANGE_PREFIX + path,
                stack: list[Any] = open_ranges) -> None:
            rf = record_function(name)
            rf.__enter__()
            stack.append(rf)

        def post(_mod: Any, _args: Any, _out: Any, *, stack: list[Any] = open_ranges) -> None:
            if stack:
                stack.pop().__exit__(None, None, None)

        handles.append(module.register_forward_pre_hook(pre))
        # always_call: a forward that raises still closes its range
        handles.append(module.register_forward_hook(post, always_call=True))
        if isinstance(module, _fast_path_modules(torch)):
            handles += _without_torch_function(torch, module)
    return handles


def _fast_path_modules(torch: Any) -> tuple[type, ...]:
    """torch's modules that choose a fused fast path only where no torch function override is active
    (``torch.overrides.has_torch_function``): nn.MultiheadAttention runs ``aten::_native_multi_head_attention`` in
    eval, the Transformer encoder layers theirs. _EagerRanges' mode is such an override."""
    nn = torch.nn
    return tuple(getattr(nn, n) for n in ("MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder")
                 if hasattr(nn, n))


def _without_torch_function(torch: Any, module: Any) -> list[Any]:
    """Hooks that run the module's forward without _EagerRanges' mode (taken off the torch function mode stack where
    it is on top, put back after), so it takes the path the user's eager call (and the timed one) takes: under the
    mode it would take the unfused one, another computation. The user's own modes and tensor subclasses stay as
    they are. Its calls then carry no source or flow range of their own; its module range stays."""
    from torch.overrides import _get_current_function_mode, _pop_mode, _push_mode

    held: list[Any] = []

    def pre(_mod: Any, _args: Any) -> None:
        top = _get_current_function_mode()
        held.append(_pop_mode() if getattr(top, "kernelscope_ranges", False) else None)

    def post(_mod: Any, _args: Any, _out: Any) -> None:
        if held and (mode := held.pop()) is not None:
            _push_mode(mode)

    return [module.register_forward_pre_hook(pre), module.register_forward_hook(post, always_call=True)]


class _EagerRanges:
    """Eager mode's source lines and dataflow, while the profiler runs (a TorchFunctionMode: no model code
    changes; profiling only, timing ran before without it):

    * every GEMM-class torch function (``F.linear``, ``torch.matmul``, ``@``, ``F.conv2d``, ...) runs inside a
      range ``kernelscope.source: <file>:<line>`` naming the first frame outside torch and kernelscope (the
      user's line that called it: ``self.gate_proj(x)`` or ``q @ k.transpose(-2, -1)``);
    * every torch function that is GEMM-class or reads a tensor such a call made, directly or through later
      calls, runs inside ``kernelscope.flow: #<serial> in=<serials>``: its own serial and those of the calls that
      made its tensor inputs. Its outputs carry the serial (an attribute on the tensor, gone with it: no
      address or id() that a later tensor could reuse), so the eager path follows a GEMM's output to the ops
      that read it (``silu(gate(x)) * up(x)``: the mul reads both GEMMs' chains) instead of guessing from call
      order. Tensor metadata calls (``size``, ``dim``, ...) run no kernel and get no range."""

    ATTR = "_kernelscope_flow"
    _META = frozenset({"size", "dim", "stride", "numel", "__get__", "__len__", "is_contiguous", "element_size",
                       "data_ptr", "storage_offset", "__format__", "__repr__", "__bool__", "is_floating_point",
                       "__hash__", "__eq__"})

    @staticmethod
    def make(torch: Any) -> Any:
        from torch.autograd.profiler import record_function
        from torch.overrides import TorchFunctionMode

        funcs = _EagerRanges._gemm_functions(torch)
        caller = _EagerRanges._user_line(torch)
        Tensor = torch.Tensor
        meta = _EagerRanges._META
        counter = [0]

        class Mode(TorchFunctionMode):
            kernelscope_ranges = True  # (_without_torch_function finds it on the stack by this)

            def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                kwargs = kwargs or {}
                gemm = func in funcs
                if not gemm and getattr(func, "__name__", "") in meta:
                    return func(*args, **kwargs)
                ins: set[int] = set()
                _flow_serials(Tensor, args, ins)
                if kwargs:
                    _flow_serials(Tensor, kwargs, ins)
                if not gemm and not ins:
                    return func(*args, **kwargs)
                counter[0] += 1
                serial = counter[0]
                flow = f"{FLOW_RANGE_PREFIX}#{serial} in={','.join(map(str, sorted(ins)))}"
                where = caller() if gemm else None
                with record_function(flow):
                    if where is None:
                        out = func(*args, **kwargs)
                    else:
                        with record_function(SOURCE_RANGE_PREFIX + where):
                            out = func(*args, **kwargs)
                _tag_flow(Tensor, out, serial)
                return out

        return Mode()

    @staticmethod
    def _gemm_functions(torch: Any) -> set[Any]:
        """The GEMM-class torch functions (and Tensor methods) this torch has."""
        import torch.nn.functional as F

        names = {(torch, "matmul"), (torch, "mm"), (torch, "bmm"), (torch, "addmm"), (torch, "baddbmm"),
                 (torch, "addbmm"), (torch, "einsum"), (torch, "tensordot"), (torch.Tensor, "matmul"),
                 (torch.Tensor, "__matmul__"), (torch.Tensor, "__rmatmul__"), (torch.Tensor, "mm"),
                 (torch.Tensor, "bmm"), (torch.Tensor, "addmm"), (torch.Tensor, "baddbmm"), (F, "linear"),
                 (F, "bilinear"), (F, "conv1d"), (F, "conv2d"), (F, "conv3d"), (F, "conv_transpose1d"),
                 (F, "conv_transpose2d"), (F, "conv_transpose3d")}
        return {getattr(owner, n) for owner, n in names if hasattr(owner, n)}

    @staticmethod
    def _user_line(torch: Any) -> Callable[[], str | None]:
        """A function that, called from ``__torch_function__``, names the first frame outside torch and
        kernelscope (``<file>:<line>``): the user's line that made the call."""
        skip = tuple(str(Path(m.__file__).resolve().parent) for m in (torch, sys.modules["kernelscope"]))
        theirs: dict[str, bool] = {}  # file -> inside torch or kernelscope (realpath once per file)

        def caller() -> str | None:
            f = sys._getframe(2)
            while f is not None:
                path = f.f_code.co_filename
                inside = theirs.get(path)
                if inside is None:
                    inside = theirs[path] = path.startswith("<") or os.path.realpath(path).startswith(skip)
                if not inside:
                    return f"{path}:{f.f_lineno}"
                f = f.f_back
            return None

        return caller


def _flow_serials(tensor: type, obj: Any, out: set[int], depth: int = 0) -> None:
    """The flow serials the tensors in ``obj`` (a call's args, in lists, tuples and dicts two deep) carry."""
    if isinstance(obj, tensor):
        s = getattr(obj, _EagerRanges.ATTR, None)
        if s is not None:
            out.add(s)
    elif depth < 2 and isinstance(obj, (list, tuple)):
        for o in obj:
            _flow_serials(tensor, o, out, depth + 1)
    elif depth < 2 and isinstance(obj, dict):
        for o in obj.values():
            _flow_serials(tensor, o, out, depth + 1)


def _tag_flow(tensor: type, obj: Any, serial: int, depth: int = 0) -> None:
    """Mark the tensors a call returned with its serial (an attribute: gone with the tensor)."""
    if isinstance(obj, tensor):
        try:
            setattr(obj, _EagerRanges.ATTR, serial)
        except (AttributeError, RuntimeError, TypeError):  # a tensor subclass that takes no attributes
            pass
    elif depth < 2 and isinstance(obj, (list, tuple)):
        for o in obj:
            _tag_flow(tensor, o, serial, depth + 1)
