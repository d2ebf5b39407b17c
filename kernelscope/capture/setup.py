"""What every point of one worker shares, and each point's model: torch, the device and dtype, the mode's
configuration (Inductor's config patch, the GEMM backends, CUTE_DSL_ARCH), a torchrun process group; the shape
points of a spec and the model built at one of them (``get_input_sweep()`` included).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelscope.capture.environment import backend_available, cute_dsl_arch, environment
from kernelscope.capture.modes import ModeDef
from kernelscope.capture.progress import progress
from kernelscope.capture.timing import _Timer
from kernelscope.errors import ModelFileError, UsageError


class Unavailable(Exception):
    """This mode cannot run on this machine (not a failure of the model)."""


def spec_points(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The shape points this worker measures (one for a static mode; every point for the dynamic mode)."""
    if spec.get("points"):
        return list(spec["points"])
    return [{"index": 0, "label": "", "params": {}, "sets": {}, "input_index": None,
             "mode_dir": spec["mode_dir"], "tb_dir": spec["tb_dir"]}]


def _mode_def(spec: dict[str, Any]) -> ModeDef:
    return ModeDef(**{**spec["mode"], "gemm_backends": tuple(spec["mode"]["gemm_backends"])
                      if spec["mode"]["gemm_backends"] else None})


def _pick_device(torch: Any, want: str) -> str:
    """--device: auto is cuda when torch sees a GPU; cuda without one is a usage error."""
    if want == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if want == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda but torch sees no CUDA device", "run on a GPU machine or pass --device cpu")
    return want


def _check_dtype(torch: Any, device: str, dtype: str | None) -> str | None:
    if device == "cuda" and dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        raise UsageError(f"bfloat16 is not supported on {torch.cuda.get_device_name(0)}",
                         "pass --dtype float16 or float32")
    return dtype


class _Setup:
    """What every point of one worker shares: torch, the device, the mode's Inductor configuration.

    The configuration (Inductor's config patch, CUTE_DSL_ARCH) holds for the worker's life and comes off in
    ``close()``, which main() calls in ``finally``."""

    def __init__(self, spec: dict[str, Any], rec: dict[str, Any]):
        self.patches = contextlib.ExitStack()
        try:
            self._configure(spec, rec)
        except BaseException:
            self.patches.close()
            raise

    def _configure(self, spec: dict[str, Any], rec: dict[str, Any]) -> None:
        self.mode = mode = _mode_def(spec)
        progress("importing torch")
        import torch

        self.torch = torch
        self.device = device = _pick_device(torch, spec["device"])
        rec["device"] = device
        if spec.get("distributed") and device == "cuda":
            # A torchrun rank's GPU, before anything touches CUDA (else every rank opens a context on GPU 0).
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % max(1, torch.cuda.device_count()))
        progress("reading the environment")  # its own stage in the log: nvidia-smi and imports, seconds on the H200
        rec["environment"] = environment(torch, device, full=not spec.get("timing_only"))
        if mode.needs_cuda and device != "cuda":
            raise Unavailable(f"{mode.name} uses CUDA graphs, which need a GPU (this run is on the CPU)")
        self.group: Any = self._start_group(spec, rec)
        self.dtype = _check_dtype(torch, device, spec.get("dtype"))  # None: the model file's own dtypes
        progress("configuring the mode")  # a compiled mode imports Inductor's configuration here
        config = self._mode_config(spec, rec)
        rec["config"] = config
        self.config = config
        self.timer = _Timer(torch, device)
        # Carried across points (the dynamic mode compiles once and meets every shape in this process).
        self.fn: Any = None
        self.model: Any = None
        self.signature: tuple | None = None
        self.codes_seen: list[str] = []
        # output code -> its Inductor provenance (kernel <-> FX nodes <-> stack traces), from the compile
        self.provenance: dict[str, dict[str, Any]] = {}
        # each graph's calling modules as the compile's backend read them, in order (capture/callers.py), and
        # output code -> its graph's
        self.caller_graphs: list[dict[str, Any]] = []
        self.callers: dict[str, dict[str, Any]] = {}
        self.last_code_paths: list[str] = []
        # the point's model and inputs before --dtype cast them, for the float64 reference (_reference_source)
        self.reference_source: Any = None

    def _start_group(self, spec: dict[str, Any], rec: dict[str, Any]) -> Any:
        """A torchrun worker's process group, up before the model is built: the model file may shard itself with
        torch.distributed. None outside torchrun."""
        if not spec.get("distributed"):
            return None
        from kernelscope.capture.dist import Group

        progress("initialising the process group")
        group = Group(self.torch, self.device, float(spec.get("timeout_s") or 900.0))
        self.patches.callback(group.close)
        rec["distributed"] = group.describe()
        return group

    def _mode_config(self, spec: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
        """The mode's configuration as the record states it; for a compiled mode, Inductor's configuration patched
        in for the worker's life (every point, and every recompile, sees it)."""
        mode, device = self.mode, self.device
        config: dict[str, Any] = {"compiled": mode.compiled, "compile_mode": mode.compile_mode,
                                  "max_autotune": mode.max_autotune, "cudagraphs": mode.cudagraphs,
                                  "dynamic": mode.dynamic, "device": device,
                                  "capability": rec["environment"].get("capability"), "dtype": self.dtype}
        notes: list[str] = rec.setdefault("notes", [])
        if not mode.compiled:
            config["gemm_backends"] = None
            return config
        import torch._inductor.config as ic

        inductor_patch: dict[str, Any] = {}
        if device == "cpu":
            inductor_patch["cpp.enable_kernel_profile"] = True  # C++ kernels appear in the trace
        if hasattr(ic.trace, "provenance_tracking_level"):
            # Inductor's provenance (kernel <-> FX nodes <-> source lines, and a "[Provenance debug handles]"
            # comment at each call site): comments and bookkeeping only, the kernels are the same
            inductor_patch["trace.provenance_tracking_level"] = 1
        freezing = spec.get("freezing")
        if freezing is None:
            freezing = device == "cpu"  # Inductor's advice for CPU inference; CPP GEMM templates need it
        inductor_patch["freezing"] = bool(freezing)
        config["freezing"] = bool(freezing)
        if mode.max_autotune:
            self._gemm_backends(ic, inductor_patch, config, notes)
        # the mode's own options (its name's @NAME=VALUE) over the run's: a candidate setting of --advise
        inductor_patch.update(mode.inductor_config)
        config["freezing"] = bool(inductor_patch["freezing"])
        config["inductor_config"] = dict(inductor_patch)
        # Entered for the worker's life: every point (and every recompile) sees the mode's configuration.
        self.patches.enter_context(ic.patch(inductor_patch))
        if device == "cpu" and not spec.get("user_cache_dir"):
            _check_vec_isa()
        return config

    def _gemm_backends(self, ic: Any, inductor_patch: dict[str, Any], config: dict[str, Any],
                       notes: list[str]) -> None:
        """max-autotune's GEMM backends: the requested ones that can run here (an unavailable mode when none
        can), and CUTE_DSL_ARCH for NVGEMM when the user left it unset."""
        mode, device, torch = self.mode, self.device, self.torch
        requested = list(mode.gemm_backends or [b.strip() for b in ic.max_autotune_gemm_backends.split(",")])
        usable, dropped = [], []
        for b in requested:
            ok, why = backend_available(torch, b, device)
            (usable if ok else dropped).append(b if ok else f"{b} ({why})")
        if dropped and mode.gemm_backends:  # Inductor's default list names GPU and CPU backends alike
            notes.append("GEMM backends unavailable here: " + "; ".join(dropped))
        if not usable:
            raise Unavailable("no requested GEMM backend can run here: " + "; ".join(dropped))
        inductor_patch["max_autotune_gemm_backends"] = ",".join(usable)
        config["gemm_backends"] = usable
        config["gemm_backends_requested"] = requested
        if "NVGEMM" in usable and device == "cuda" and not os.environ.get("CUTE_DSL_ARCH"):
            # torch 2.14.1's autotune workers otherwise compile every NVGEMM choice for sm_100a and all
            # fail on sm90 ("expects arch to be sm_90a, but got sm_100a"; fixture nvgemm-arch-failure).
            arch = cute_dsl_arch(*torch.cuda.get_device_capability(0))
            self.patches.callback(_restore_env, "CUTE_DSL_ARCH", os.environ.get("CUTE_DSL_ARCH"))
            os.environ["CUTE_DSL_ARCH"] = arch
            notes.append(f"set CUTE_DSL_ARCH={arch} from the device's compute capability (unset by the user)")
            config["cute_dsl_arch"] = arch

    def close(self) -> None:
        """Take the mode's configuration off (Inductor's config, the environment): the process is as it was."""
        self.patches.close()


def _check_vec_isa() -> None:
    """Inductor's C++ backend checks once per machine which vector ISAs the compiler builds and loads (six small
    compiles and loads: about 6 s on 2 cores) and keeps the answer in its default cache, where a user's own
    compiles find it. Checked there now, before the compile timer: in the mode's fresh cache it would be charged
    to every cold compile. The answer stays in this process for the compile that follows. Where the check fails
    (no C++ compiler, an older torch), it is left to the compile, whose failure the worker classifies."""
    fresh = os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    try:
        from torch._inductor.cpu_vec_isa import valid_vec_isa_list

        valid_vec_isa_list()
    except Exception:
        pass
    finally:
        _restore_env("TORCHINDUCTOR_CACHE_DIR", fresh)


def _restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _param_names(torch: Any, model: Any) -> list[str]:
    """The model's parameter and buffer names (tied ones under each name): kernelscope.provenance maps Dynamo's
    flattened attribute names (``l__self___layers_0_mlp_gate_proj_weight``, printed when freezing installs the
    parameters as graph attributes) back to module paths through them; the flattening alone is ambiguous."""
    from kernelscope.modelfile import user_model

    model = user_model(model)  # the names of the model get_model() returned, not of kernelscope's wrapper
    if not isinstance(model, torch.nn.Module):
        return []
    return ([n for n, _ in model.named_parameters(remove_duplicate=False)]
            + [n for n, _ in model.named_buffers(remove_duplicate=False)])


def _param_signature(torch: Any, model: Any) -> tuple | None:
    if not isinstance(model, torch.nn.Module):
        return None
    return tuple((n, tuple(t.shape), str(t.dtype)) for n, t in (*model.named_parameters(), *model.named_buffers()))


def _describe_inputs(torch: Any, inputs: Any) -> str:
    parts = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            parts.append("x".join(str(s) for s in x.shape) or "scalar")
        else:
            parts.append(repr(x)[:20])
    return ", ".join(parts)


def _build_point(setup: _Setup, spec: dict[str, Any], point: dict[str, Any], rec: dict[str, Any],
                 before_device: Callable[[], None] | None = None) -> tuple[Any, list[Any], Path | None]:
    """The model and inputs at ``point`` on the device, in the run's dtype, and the run's cache folder for them
    (model_cache.py: built by the run's first worker at this point, loaded by the others). ``before_device``:
    called once the model is built or loaded on the CPU, before anything goes to the device (a worker started
    ahead of its turn waits there: capture/rounds.py ``Staged``)."""
    from kernelscope import modelfile
    from kernelscope.capture import model_cache

    torch = setup.torch
    spec_m = modelfile.inspect_model_file(spec["model"])
    cache = model_cache.entry_for(spec, point, torch, setup.device)
    at = f" at {point['label']}" if point.get("label") else ""
    waits = bool(spec.get("model_from")) and cache is not None and not model_cache.saved(cache)
    progress("importing the model file" if waits else f"loading the model{at} (built once for this run)"
             if model_cache.saved(cache) else f"building the model{at}")
    modelfile.seed_everything(spec.get("seed", 0))
    module = modelfile.load_module(spec_m, {**(spec.get("sets") or {}), **(point.get("sets") or {})})
    if waits:
        # started beside the process that builds the model: its file's top level (its imports) ran meanwhile;
        # now wait for the model's file (or for that process to end)
        progress(f"waiting for the model{at} (built once for this run)")
        model_cache.wait_saved(cache, Path(spec["model_from"]))
        progress(f"loading the model{at} (built once for this run)")
    model, raw, _ = model_cache.constructed(torch, lambda: modelfile.construct(module, spec_m), module, cache,
                                            rec.setdefault("notes", []), device=setup.device)
    model, inputs = modelfile.assemble(model, raw)
    del raw  # a loaded file's tensors: only prepare()'s copies stay
    if point.get("input_index") is not None:
        entries = _input_sweep(module, spec_m)
        entry = entries[point["input_index"]]
        inputs = [entry] if isinstance(entry, torch.Tensor) else list(entry)
        modelfile.check_arity(model, inputs)
    if before_device is not None:
        before_device()
    shared = model_cache.reference_path(cache, point.get("input_index"))
    # another mode's first process made the reference at this point already: no uncast copy to keep for it
    setup.reference_source = None if shared is not None and shared.is_file() else \
        _reference_source(setup, spec, model, inputs)
    model, inputs = modelfile.prepare(model, inputs, dtype=setup.dtype, device=setup.device)
    # The dtype the model computes in (--dtype, else its parameters'): token inputs are int64, and a bf16 model
    # judged by float32's tolerance failed every run. None here: the eager outputs say (worker.py).
    rec["dtype"] = setup.config["dtype"] = modelfile.compute_dtype(model, inputs, setup.dtype)
    rec["module_prefix"] = ""  # module paths (param_names, eager ranges, Dynamo's names) are the user's model's
    rec["inputs"] = _describe_inputs(torch, inputs)
    return model, inputs, cache


def _reference_source(setup: _Setup, spec: dict[str, Any], model: Any, inputs: list[Any]) -> Any:
    """The model and inputs as the model file built them, kept on their device for the float64 reference when
    --dtype casts them: torch's benchmark suite makes its float64 reference from the model before it casts it to
    the run's dtype, so eager's error against it includes the rounding of weights and inputs to that dtype, and
    torch's accuracy rule (3x eager's rmse for fp16/bf16) is calibrated on that. None: nothing is cast (the
    reference is the cast model's own float64 copy) or no reference is made."""
    import copy

    torch = setup.torch
    if (not setup.dtype or not spec.get("reference", True) or spec.get("compile_only") or spec.get("timing_only")
            or not isinstance(model, torch.nn.Module)):
        return None
    want = getattr(torch, setup.dtype)
    tensors = [*model.parameters(), *model.buffers(), *(x for x in inputs if isinstance(x, torch.Tensor))]
    if all(t.dtype == want for t in tensors if t.is_floating_point()):
        return None
    try:
        return copy.deepcopy(model), list(inputs)  # inputs: prepare() makes new tensors, these stay as built
    except Exception:  # a model that cannot be copied: the reference falls back to the cast model's copy
        return None


def _input_sweep(module: Any, spec_m: Any) -> list[Any]:
    from kernelscope import modelfile

    try:
        entries = module.get_input_sweep()
    except Exception as exc:
        raise modelfile.fail_in_user_code("get_input_sweep()", spec_m.path, exc) from exc
    if not isinstance(entries, (list, tuple)) or not entries:
        raise ModelFileError(f"get_input_sweep() returned {type(entries).__name__ if entries is not None else 'None'}",
                             "return a non-empty list: dicts of constants ({'batch_size': 16}) or input lists")
    return list(entries)


def list_points(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """What get_input_sweep() returns, described for the parent (which never runs the model file itself)."""
    import torch

    from kernelscope import modelfile

    spec_m = modelfile.inspect_model_file(spec["model"])
    modelfile.seed_everything(spec.get("seed", 0))
    module = modelfile.load_module(spec_m, spec.get("sets") or {})
    out = []
    for i, entry in enumerate(_input_sweep(module, spec_m)):
        if isinstance(entry, dict):
            bad = [k for k in entry if k not in spec_m.constants]
            if bad:
                raise ModelFileError(f"get_input_sweep() entry {i} names {bad[0]!r}, which is not a module-level "
                                     f"constant of {Path(spec_m.path).name}", "use the file's constants as keys")
            out.append({"kind": "sets", "detail": {k: v if isinstance(v, (int, float, str, bool)) or v is None
                                                   else repr(v) for k, v in entry.items()}})
        elif isinstance(entry, (list, tuple, torch.Tensor)):
            items = [entry] if isinstance(entry, torch.Tensor) else list(entry)
            if not any(isinstance(x, torch.Tensor) for x in items):
                raise ModelFileError(f"get_input_sweep() entry {i} holds no tensor",
                                     "each entry is a dict of constants or a list of the model's inputs")
            out.append({"kind": "inputs", "detail": _describe_inputs(torch, items)})
        else:
            raise ModelFileError(f"get_input_sweep() entry {i} is a {type(entry).__name__}",
                                 "each entry is a dict of constants or a list of the model's inputs")
    return out
