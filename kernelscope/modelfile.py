"""Load a model file in one of the two protocols and build the model and its inputs.

Protocols:
- ``get_model()`` -> nn.Module or callable, ``get_inputs()`` -> list/tuple of positional inputs, a dict of keyword
  inputs (``model(**inputs)``, as Hugging Face models are called), or ``(args, kwargs)``;
- KernelBench: ``class Model``, ``get_init_inputs()`` -> constructor args, ``get_inputs()``.

``--set NAME=VALUE`` overrides module-level constants before the model and inputs are built: the file is
executed, the constants replaced in its namespace, and only then are get_model/get_inputs called, so functions
that read the globals see the new values.

Validation of the file (exists, is Python, defines a protocol) needs no torch; building the model does.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelscope.errors import ModelFileError, UsageError

EXAMPLE = "see samples/linear_gelu.py"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    path: str
    protocol: str  # "get_model" or "kernelbench"
    constants: tuple[str, ...]


def parse_sets(items: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """Parse ``NAME=VALUE`` pairs; values are Python literals (64, 1e-3, 'text', (1, 2)) or bare strings."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise UsageError(
                f"--set {item!r} is not NAME=VALUE",
                "write it as --set batch_size=64 (NAME must be a Python identifier)",
            )
        raw = raw.strip()
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw  # a bare word such as gelu is taken as a string
        out[name] = value
    return out


def inspect_model_file(path: str | os.PathLike[str]) -> ModelSpec:
    """Check the file without running it: exists, parses, defines a protocol. No torch needed."""
    p = Path(path)
    if not p.exists():
        raise ModelFileError(f"model file {p} does not exist", f"pass the path of a Python model file ({EXAMPLE})")
    if p.is_dir():
        raise ModelFileError(f"model file {p} is a directory", f"pass a .py file ({EXAMPLE})")
    if p.suffix != ".py":
        raise ModelFileError(f"model file {p} is not a .py file", f"pass a Python model file ({EXAMPLE})")
    try:
        source = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"model file {p} is not UTF-8 text", f"pass a Python source file ({EXAMPLE})")
    except OSError as exc:
        raise ModelFileError(f"model file {p} cannot be read ({exc.strerror})", "check its permissions")
    try:
        tree = ast.parse(source, filename=str(p))
    except SyntaxError as exc:
        raise ModelFileError(
            f"model file {p} has a syntax error at line {exc.lineno}: {exc.msg}", "fix the Python syntax"
        )
    names: set[str] = set()
    constants: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
                    constants.append(t.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
    if "get_model" in names:
        protocol = "get_model"
    elif "Model" in names:
        protocol = "kernelbench"
    else:
        raise ModelFileError(
            f"{p} defines no get_model() or Model class",
            "define get_model() and get_inputs(), or KernelBench's Model, get_init_inputs() and get_inputs() "
            f"({EXAMPLE})",
        )
    if "get_inputs" not in names:
        raise ModelFileError(f"{p} defines no get_inputs()",
                             f"define get_inputs() returning the model's positional inputs ({EXAMPLE})")
    if protocol == "kernelbench" and "get_init_inputs" not in names:
        raise ModelFileError(
            f"{p} defines class Model but no get_init_inputs()",
            "define get_init_inputs() returning Model's constructor arguments (return [] for none)",
        )
    return ModelSpec(path=str(p.resolve()), protocol=protocol, constants=tuple(constants))


def check_sets(spec: ModelSpec, sets: dict[str, Any]) -> None:
    unknown = [n for n in sets if n not in spec.constants]
    if unknown:
        known = ", ".join(c for c in spec.constants if not c.startswith("_")) or "none"
        raise UsageError(
            f"--set {unknown[0]}: {Path(spec.path).name} has no module-level constant {unknown[0]!r}",
            f"use one of: {known}",
        )


class ModelCodeError(ModelFileError):
    """The model file raised while importing or building (its traceback goes to the log)."""

    def __init__(self, what: str, fix: str | None = None, detail: str = "", stage: str = ""):
        super().__init__(what, fix)
        self.detail = detail
        self.stage = stage


def fail_in_user_code(stage: str, path: str, exc: BaseException) -> ModelCodeError:
    tb = traceback.extract_tb(exc.__traceback__)
    line = next((f.lineno for f in reversed(tb) if f.filename == path), None)
    where = f" (line {line})" if line else ""
    return ModelCodeError(
        f"{stage} in {Path(path).name}{where} raised {type(exc).__name__}: {exc}",
        "fix the model file; run with --debug for the traceback",
        detail="".join(traceback.format_exception(exc)),
        stage=stage,
    )


def load_module(spec: ModelSpec, sets: dict[str, Any]) -> types.ModuleType:
    """Execute the model file as a module, then apply --set overrides to its globals."""
    path = spec.path
    folder = str(Path(path).parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # let the model import its neighbours
    mod_spec = importlib.util.spec_from_file_location("kernelscope_user_model", path)
    if mod_spec is None or mod_spec.loader is None:
        raise ModelFileError(f"cannot import {path}", "pass a Python model file")
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules["kernelscope_user_model"] = module
    try:
        mod_spec.loader.exec_module(module)
    except Exception as exc:  # the user's import-time code
        raise fail_in_user_code("importing the model file", path, exc) from exc
    for name, value in sets.items():
        setattr(module, name, value)
    return module


def build(module: types.ModuleType, spec: ModelSpec) -> tuple[Any, list[Any]]:
    """Call the protocol functions. Returns (model, inputs); raises ModelFileError on protocol violations."""
    return assemble(*construct(module, spec))


def construct(module: types.ModuleType, spec: ModelSpec) -> tuple[Any, Any]:
    """The model file's own code: the model (get_model() or Model(*get_init_inputs())) and get_inputs()'s value
    as returned. What the capture worker shares between processes (capture/model_cache.py)."""
    import torch

    try:
        if spec.protocol == "get_model":
            model = module.get_model()
        else:
            init = module.get_init_inputs()
            if not isinstance(init, (list, tuple)):
                raise ModelFileError(
                    f"get_init_inputs() returned {type(init).__name__}",
                    "return a list of Model's constructor arguments"
                )
            model = module.Model(*init)
    except ModelFileError:
        raise
    except Exception as exc:
        raise fail_in_user_code("building the model", spec.path, exc) from exc
    if not (isinstance(model, torch.nn.Module) or callable(model)):
        raise ModelFileError(
            f"get_model() returned {type(model).__name__}, which is not an nn.Module or callable",
            "return the model (an nn.Module or a function)",
        )
    try:
        inputs = module.get_inputs()
    except Exception as exc:
        raise fail_in_user_code("get_inputs()", spec.path, exc) from exc
    return model, inputs


def assemble(model: Any, inputs: Any) -> tuple[Any, list[Any]]:
    """construct()'s model and get_inputs() value checked against the protocol, as (model, positional inputs):
    keyword inputs become a module that takes them positionally (KeywordInputs)."""
    import torch

    args, kwargs = split_inputs(inputs)
    if kwargs:
        _check_kwargs(model, args, kwargs)
        return KeywordInputs(model, len(args), tuple(kwargs)), [*args, *kwargs.values()]
    inputs = args
    if not any(isinstance(x, torch.Tensor) for x in inputs):
        kinds = ", ".join(type(x).__name__ for x in inputs) or "an empty list"
        raise ModelFileError(f"get_inputs() returned no tensor ({kinds})", "return a list holding at least one tensor")
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.numel() == 0:
            raise ModelFileError(
                f"get_inputs() input {i} is empty (shape {tuple(x.shape)}): kernels and timings would measure nothing",
                "return inputs with at least one element (check the sizes, e.g. batch_size)",
            )
    check_arity(model, inputs)
    return model, list(inputs)


def split_inputs(inputs: Any) -> tuple[list[Any], dict[str, Any]]:
    """get_inputs()'s value as (positional, keyword) inputs. Accepted: a tensor, a list/tuple of positional
    inputs, a dict of keyword inputs (how Hugging Face models are called: ``model(**inputs)``), or
    ``(args, kwargs)``: a pair of a list/tuple and a dict."""
    import torch

    if isinstance(inputs, torch.Tensor):
        return [inputs], {}
    if isinstance(inputs, dict) or _is_mapping(inputs):
        kwargs = dict(inputs)
        bad = [k for k in kwargs if not isinstance(k, str) or not k.isidentifier()]
        if bad:
            raise ModelFileError(f"get_inputs() returned a dict with key {bad[0]!r}, which is not an argument name",
                                 "key the dict by forward()'s parameter names, e.g. {'input_ids': ids}")
        if not kwargs:
            raise ModelFileError("get_inputs() returned an empty dict", "return the model's inputs")
        _require_tensor(list(kwargs.values()))
        return [], kwargs
    if (isinstance(inputs, tuple) and len(inputs) == 2 and isinstance(inputs[0], (list, tuple))
            and (isinstance(inputs[1], dict) or _is_mapping(inputs[1]))):
        args, kwargs = list(inputs[0]), dict(inputs[1])
        _require_tensor([*args, *kwargs.values()])
        return args, kwargs
    if not isinstance(inputs, (list, tuple)):
        raise ModelFileError(
            f"get_inputs() returned {type(inputs).__name__}",
            "return a list of the model's positional inputs, a dict of keyword inputs, or (args, kwargs)",
        )
    return list(inputs), {}


def _is_mapping(x: Any) -> bool:
    from collections.abc import Mapping

    return isinstance(x, Mapping)


def _require_tensor(values: list[Any]) -> None:
    import torch

    if not any(isinstance(x, torch.Tensor) for x in values):
        kinds = ", ".join(type(x).__name__ for x in values) or "nothing"
        raise ModelFileError(f"get_inputs() returned no tensor ({kinds})", "return inputs holding at least one tensor")
    for x in values:
        if isinstance(x, torch.Tensor) and x.numel() == 0:
            raise ModelFileError(
                f"get_inputs() returned an empty input (shape {tuple(x.shape)}): kernels and timings would measure "
                "nothing", "return inputs with at least one element (check the sizes, e.g. batch_size)")


def _check_kwargs(model: Any, args: list[Any], kwargs: dict[str, Any]) -> None:
    """Keyword inputs that forward() cannot take are a model-file mistake: say which, before the model runs."""
    import inspect

    import torch

    fn = model.forward if isinstance(model, torch.nn.Module) else model
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise ModelFileError(f"get_inputs()'s inputs do not fit the model's forward: {exc}",
                             "return keys that are forward()'s parameter names") from None
    except ValueError:
        return


def KeywordInputs(model: Any, n_args: int, names: tuple[str, ...]) -> Any:  # noqa: N802 - a class factory
    """The model called with keyword inputs, as a module that takes them all positionally.

    The worker calls ``fn(*inputs)`` everywhere (first call, timing, profiling, the float64 reference, which casts
    every floating input); flattening the keywords into that list keeps every one of those paths, and the user's
    model stays a submodule so ``.to()``, ``deepcopy`` and ``torch.compile`` see it as it is. Module paths are the
    user's model's, not the wrapper's (``model.layers.0``, not ``model.model.layers.0``): the worker names
    parameters and modules of ``user_model(...)`` and compiles it, not the wrapper (``rewrap``)."""
    import torch

    def call(fn: Any, flat: tuple[Any, ...]) -> Any:
        return fn(*flat[:n_args], **dict(zip(names, flat[n_args:])))

    class KeywordInputsModule(torch.nn.Module):
        kernelscope_keyword_inputs = True

        def __init__(self) -> None:
            super().__init__()
            self.model = model
            self.n_args = n_args
            self.names = names

        def forward(self, *flat: Any) -> Any:
            return call(self.model, flat)

        def rewrap(self, fn: Any) -> Any:
            """``fn`` (the user's model, compiled) taking the flat inputs as this wrapper does."""
            return lambda *flat: call(fn, flat)

    if not isinstance(model, torch.nn.Module):
        class KeywordInputsCall:
            def __call__(self, *flat: Any) -> Any:
                return call(model, flat)

        return KeywordInputsCall()
    return KeywordInputsModule()


def user_model(model: Any) -> Any:
    """The model get_model() returned: the module inside kernelscope's keyword-inputs wrapper, else ``model``.
    Every module path kernelscope records is relative to it, so ``get_submodule(path)`` finds it."""
    return model.model if getattr(model, "kernelscope_keyword_inputs", False) else model


def compile_user_model(model: Any, compile_fn: Any) -> Any:
    """``compile_fn`` applied to the user's model, called as ``model`` is (``fn(*inputs)``): Dynamo's root is then
    the user's model (its parameter names, ``L['self'].layers[0]``, spell the user's paths), not the wrapper."""
    inner = user_model(model)
    if inner is model:
        return compile_fn(model)
    return model.rewrap(compile_fn(inner))


def output_tensors(out: Any) -> list[Any]:
    """Every tensor of a model's output, in a fixed order: tensors, lists/tuples, dicts, dataclasses and
    Hugging Face ``ModelOutput`` (a dict subclass whose fields may also be attributes), nested."""
    return [t for _, t in named_output_tensors(out)]


def named_output_tensors(out: Any) -> list[tuple[str, Any]]:
    """``output_tensors`` with each tensor's path in the output: ``logits``, ``last_hidden_state``, ``[0]``,
    ``hidden_states[2]``, ``out.a`` (a bare tensor is ``output``). The numerics name each output by it."""
    import dataclasses

    import torch

    found: list[tuple[str, Any]] = []

    def walk(x: Any, path: str) -> None:
        if isinstance(x, torch.Tensor):
            found.append((path or "output", x))
        elif _is_mapping(x):
            for k, v in x.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]")
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                walk(getattr(x, f.name, None), f"{path}.{f.name}" if path else f.name)

    walk(out, "")
    return found


def check_arity(model: Any, inputs: list[Any]) -> None:
    """A wrong number of inputs is a model-file mistake: say so before the model runs, not as a TypeError."""
    import inspect

    import torch

    fn = model.forward if isinstance(model, torch.nn.Module) else model
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if not len(required) <= len(inputs) <= len(positional):
        want = f"{len(required)}" if len(required) == len(positional) else f"{len(required)} to {len(positional)}"
        raise ModelFileError(
            f"get_inputs() returned {len(inputs)} input(s) but the model's forward takes {want} "
            f"({', '.join(p.name for p in positional) or 'none'})",
            "make get_inputs() return one entry per positional argument of forward()",
        )


def prepare(model: Any, inputs: list[Any], *, dtype: str | None, device: str) -> tuple[Any, list[Any]]:
    """Move model and inputs to the device; cast floating parameters and inputs to dtype (None: keep the
    dtypes the model file chose)."""
    import torch

    dt = getattr(torch, dtype) if dtype else None
    if isinstance(model, torch.nn.Module):
        model = model.to(device=device)
        if dt is not None:
            model = model.to(dtype=dt)
        model.eval()

    def cast(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            x = x.to(device)
            return x.to(dt) if dt is not None and x.is_floating_point() else x
        return x

    return model, [cast(x) for x in inputs]


def floating_dtype(tensors: Any) -> str | None:
    """The floating dtype holding most elements among ``tensors`` ("bfloat16"); None when none is floating."""
    import torch

    counts: dict[str, int] = {}
    for x in tensors:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            name = str(x.dtype).replace("torch.", "")
            counts[name] = counts.get(name, 0) + x.numel()
    return max(counts, key=lambda k: counts[k]) if counts else None


def compute_dtype(model: Any, inputs: list[Any], dtype: str | None) -> str | None:
    """The dtype a run computes in, which picks its numerics tolerance: ``--dtype``, else the model's floating
    parameters' and buffers', else its floating inputs'; None when neither has one (the worker then reads the
    outputs'). Token inputs (``input_ids``, int64) say nothing about it: a bf16 GPT-2 computes in bf16."""
    import torch

    if dtype:
        return dtype
    if isinstance(model, torch.nn.Module):
        found = floating_dtype([*model.parameters(), *model.buffers()])
        if found:
            return found
    return floating_dtype(inputs)


def seed_everything(seed: int = 0) -> None:
    import random

    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
