"""The model built once per run and shared with the run's other workers; the float64 reference computed once.

Every mode and process of a run is a fresh worker, and each used to build the model itself: a 1B Llama's random
initialisation took 8.8 s on the H200 host (14-17.5 s beside another profile), nine times in a run of three modes x
three processes, and each mode's first process computed the same float64 reference. Now the first worker that
builds the model at a shape point saves what the model file made (``modelfile.construct``: the model object,
pickled whole, so parameters, buffers persistent or not and plain tensor attributes come back; ``get_inputs()``'s
value; the random generators' states after both) into ``<out>/model-cache/<key>/model.pt``, and the run's other
workers load that file instead of calling get_model(). They still execute the model file's top level first (its
classes must resolve, and its own state is made as before), so a loaded model is the fresh build, bit for bit, in
the same process state. The first process that computes the float64 reference saves its outputs beside it for the
other modes' first processes.

A loading worker on CUDA maps the file (``mmap=True``): prepare() reads the weights once, straight into GPU
memory. On the CPU device the file is read into memory, so no timed call page-faults on the file's pages.

The key: the model file's hash, the --set values and the point's, the seed, dtype, device and torch's version.
A model is built in every worker as before, with a note saying why, when it holds tensors off the CPU, when
get_model() changed the model file's globals, torch's process-wide settings or Dynamo's or Inductor's configuration
(a worker that loads would not), or when pickle cannot save it; a function (not an nn.Module) is called in every
worker without a note. Not under torchrun, where a model may shard itself by rank. The runner removes the folder
when the run's workers are done.

Pure of torch imports (the worker passes torch in): the runner reads CACHE_DIR from here.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

CACHE_DIR = "model-cache"  # in the run's output folder (outdir.OWNED)
_MODEL = "model.pt"
_NOT_SHARED = "not-shared.txt"  # why the first worker could not save the model: the others build it too
_EACH = "each-worker.txt"  # the model file's get_model() returns a function: every worker calls it (no note)
WAIT_POLL_S = 0.1  # how often a worker started beside the builder looks for the model's file
_CONFIGS = ("torch._dynamo.config", "torch._inductor.config")


def entry_for(spec: dict[str, Any], point: dict[str, Any], torch: Any, device: str) -> Path | None:
    """The cache folder of this worker's model at ``point``; None when the run shares no model (one worker, or
    torchrun ranks)."""
    root = spec.get("model_cache")
    if not root or spec.get("distributed"):
        return None
    key = {"model": hashlib.sha256(Path(spec["model"]).read_bytes()).hexdigest(),
           "sets": {**(spec.get("sets") or {}), **(point.get("sets") or {})}, "seed": spec.get("seed", 0),
           "dtype": spec.get("dtype"), "device": device, "torch": torch.__version__}
    return Path(root) / hashlib.sha256(json.dumps(key, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def saved(entry: Path | None) -> bool:
    """Whether an earlier worker of the run saved the model of this entry."""
    return entry is not None and (entry / _MODEL).is_file()


def wait_saved(entry: Path, builder_ended: Path) -> None:
    """Block until the run's builder has saved the model of ``entry``, said it cannot (``not-shared.txt``, or the
    model is a function), or ended (the parent creates ``builder_ended`` then: this worker then builds it too,
    with a note). A stat every 0.1 s: the waiting uses no CPU to speak of."""
    import time

    while not any(p.exists() for p in (entry / _MODEL, entry / _NOT_SHARED, entry / _EACH, builder_ended)):
        time.sleep(WAIT_POLL_S)


def constructed(torch: Any, construct: Callable[[], tuple[Any, Any]], module: Any, entry: Path | None,
                notes: list[str], *, device: str) -> tuple[Any, Any, bool]:
    """(model, get_inputs() value, loaded): from the run's cache when an earlier worker saved them, else built by
    ``construct()`` (and saved for the later workers when this is the first)."""
    if saved(entry):
        try:
            got = torch.load(entry / _MODEL, mmap=device != "cpu", weights_only=False, map_location="cpu")
            _set_rng_state(torch, got["rng"])
            return got["model"], got["inputs"], True
        except Exception as exc:  # noqa: BLE001 - a file we cannot read back: build as before
            notes.append(f"the model saved by an earlier process of this run could not be loaded "
                         f"({type(exc).__name__}: {str(exc)[:200]}): built again")
    if entry is None or (entry / _NOT_SHARED).is_file() or (entry / _EACH).is_file():
        if entry is not None and (entry / _NOT_SHARED).is_file():  # the first worker could not share it: every
            notes.append((entry / _NOT_SHARED).read_text(encoding="utf-8"))  # worker says so
        return (*construct(), False)
    before = _world(torch, module)
    model, inputs = construct()
    if not isinstance(model, torch.nn.Module):  # a function: nothing to build again (the others need not wait)
        entry.mkdir(parents=True, exist_ok=True)
        (entry / _EACH).write_text("get_model() returns a function: called in every worker", encoding="utf-8")
        return model, inputs, False
    why = _changed(before, _world(torch, module)) or _off_cpu(torch, model, inputs)
    if why is None:
        why = _save(torch, entry, {"model": model, "inputs": inputs, "rng": _rng_state(torch)})
    if why is not None:
        note = f"the model is built in every process of this run, not once: {why}"
        notes.append(note)
        entry.mkdir(parents=True, exist_ok=True)
        (entry / _NOT_SHARED).write_text(note, encoding="utf-8")
    return model, inputs, False


def reference_path(entry: Path | None, input_index: Any) -> Path | None:
    """Where the float64 reference's outputs at a point are kept (None: no cache for this run)."""
    return entry / f"reference-{input_index if input_index is not None else 'inputs'}.pt" if entry else None


def shared_reference(torch: Any, entry: Path | None, input_index: Any,
                     compute: Callable[[], tuple[list[Any] | None, dict[str, Any]]],
                     ) -> tuple[list[Any] | None, dict[str, Any]]:
    """The float64 reference's outputs and how they were made: from the run's cache when another mode's first
    process computed them at this point, else ``compute()`` (saved for the next)."""
    path = reference_path(entry, input_index)
    if path is not None and path.is_file():
        try:
            got = torch.load(path, weights_only=False, map_location="cpu")
            return got["outputs"], got["how"]
        except Exception:  # noqa: BLE001 - computed again instead
            pass
    outputs, how = compute()
    if path is not None:
        _save(torch, path.parent, {"outputs": outputs, "how": how}, name=path.name)
    return outputs, how


def _save(torch: Any, folder: Path, obj: dict[str, Any], name: str = _MODEL) -> str | None:
    """Write ``obj`` atomically (a reader sees the whole file or none); why not, when pickle cannot."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.{os.getpid()}.tmp"
    try:
        torch.save(obj, tmp)
        os.replace(tmp, folder / name)
    except Exception as exc:  # noqa: BLE001 - an object pickle cannot save (a lambda, a local class, a handle)
        tmp.unlink(missing_ok=True)
        return f"it could not be saved ({type(exc).__name__}: {str(exc)[:200]})"
    return None


def _off_cpu(torch: Any, model: Any, inputs: Any) -> str | None:
    tensors = [*model.parameters(), *model.buffers()]
    stack = [inputs]
    while stack:  # get_inputs()'s tensors, in lists, tuples and dicts
        x = stack.pop()
        if isinstance(x, torch.Tensor):
            tensors.append(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    off = next((t.device for t in tensors if t.device.type != "cpu"), None)
    return f"the model file builds tensors on {off}" if off is not None else None


def _world(torch: Any, module: Any) -> dict[str, Any]:
    """What get_model() could change besides the model: which objects the model file's globals name, torch's
    process-wide settings, Dynamo's and Inductor's configuration."""
    b = torch.backends
    flags = {"default dtype": torch.get_default_dtype(),
             "float32 matmul precision": torch.get_float32_matmul_precision(),
             "deterministic algorithms": torch.are_deterministic_algorithms_enabled(),
             "threads": torch.get_num_threads(), "grad mode": torch.is_grad_enabled(),
             "cuda.matmul.allow_tf32": b.cuda.matmul.allow_tf32,
             "cuda.matmul.allow_fp16_reduced_precision_reduction": b.cuda.matmul.allow_fp16_reduced_precision_reduction,
             "cuda.matmul.allow_bf16_reduced_precision_reduction": b.cuda.matmul.allow_bf16_reduced_precision_reduction,
             "cudnn.allow_tf32": b.cudnn.allow_tf32, "cudnn.benchmark": b.cudnn.benchmark,
             "cudnn.deterministic": b.cudnn.deterministic}
    configs = {name: sys.modules[name].get_config_copy() for name in _CONFIGS if name in sys.modules}
    names = {k: id(v) for k, v in vars(module).items() if not k.startswith("__")}  # not __warningregistry__
    return {"globals": names, "flags": flags, "configs": configs}


def _changed(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    g0, g1 = before["globals"], after["globals"]
    rebound = sorted(k for k in g0.keys() | g1.keys() if g0.get(k) != g1.get(k))
    if rebound:
        return f"get_model() sets the model file's global {rebound[0]!r}, which a worker that loads would not"
    for k, v in after["flags"].items():
        if before["flags"][k] != v:
            return f"get_model() changes torch's {k} ({before['flags'][k]} -> {v}), which a worker that loads would not"
    for name, cfg in after["configs"].items():
        old = before["configs"].get(name)
        if old is None:  # what it set there cannot be told from the defaults
            return f"get_model() imports {name}, which a worker that loads would not"
        key = next((k for k in cfg if cfg[k] != old.get(k)), None)
        if key is not None:
            return f"get_model() changes {name}.{key}, which a worker that loads would not"
    return None


def _rng_state(torch: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "random": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    if "numpy" in sys.modules:
        state["numpy"] = sys.modules["numpy"].random.get_state()
    return state


def _set_rng_state(torch: Any, state: dict[str, Any]) -> None:
    """The generators as the worker that built the model left them: what the model file's forward, or a later
    get_input_sweep(), draws comes out as in a fresh build."""
    torch.set_rng_state(state["torch"])
    random.setstate(state["random"])
    if "cuda" in state:
        torch.cuda.set_rng_state_all(state["cuda"])  # lazy: applied when CUDA starts
    if "numpy" in state and "numpy" in sys.modules:  # imported by the model file here too (seed_everything
        sys.modules["numpy"].random.set_state(state["numpy"])  # does not seed numpy: it is the file's own)
