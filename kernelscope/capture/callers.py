"""Which module called each op of a compiled graph: Dynamo's ``nn_module_stack`` of every FX node, read as the graph
goes to Inductor and written beside the graph's output code (``code/graph_<i>.modules.json``).

The compile's backend is Inductor itself: a subclass of ``torch._TorchCompileInductorWrapper`` (what
``torch.compile(backend="inductor")`` builds), made with the mode and ``dynamic`` the worker compiles with, whose
call reads the graph's nodes and hands the graph to Inductor unchanged. Inductor, its caches, CUDA graphs and
max-autotune behave as under ``torch.compile(mode=...)``; nothing is added to the graph (a pre-grad pass would
change Inductor's cache key). A torch whose wrapper is not as expected compiles as before and records nothing.

Each node's stack is written innermost module first, each module as ``get_submodule`` on the user's model finds
it. Dynamo keys the stack by ``id()`` of the module (torch 2.5 and later; "140534093031824", "...@1" for a second
call of the module), so a path is found on the model by identity, whatever frame the graph was traced from; an
entry keyed otherwise is read from Dynamo's spelling of the path (``L['self'].layers[0].mlp``,
``L['self'].model.layers.0.mlp``, ``L['self']._modules['mlp']``) when the frame is the model's own forward, and kept
only where the model has a module of that class there. Entries that are not modules of the model (a function a
library wrapped in a module object, held in a global) are left out.

A graph's ``frame`` is the module whose forward Dynamo compiled (``""``: the model; a submodule's path where a
graph break inside it made Dynamo compile that forward on its own; None: not known). Ops of the frame's own code
have no stack of their own: their entry is the frame's path. A graph compiled from a submodule's frame also runs
for the other instances of its class (Dynamo reuses it): its paths are those of the instance it was traced on.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

# Dynamo's spelling of a module's path from the frame's locals: L['self'] and what follows it
_ROOT = re.compile(r"""^L\[['"](\w+)['"]\]""")
_STEP = re.compile(r"""^(?:\.(\w+)|\[(\d+)\]|\[['"]([^'"]+)['"]\])""")
_GETATTR = re.compile(r"""getattr\((.+), ['"]([^'"]+)['"]\)$""")


def recording_backend(torch: Any, mode: str | None, dynamic: bool | None, root: Any,
                      graphs: list[dict[str, Any]]) -> Any | None:
    """A torch.compile backend that is Inductor with ``mode`` (None: the default) and ``dynamic``, appending each
    graph's callers (``graph_callers``) to ``graphs`` as it goes to Inductor; None where this torch's Inductor wrapper
    is not the class this module knows (compile with ``backend="inductor"`` then)."""
    base: Any = getattr(torch, "_TorchCompileInductorWrapper", None)
    if not isinstance(base, type):
        return None
    try:
        params = list(inspect.signature(base).parameters)  # its __init__'s: mode, options, dynamic[, name]
        call = vars(base).get("__call__")
        call_params = list(inspect.signature(call).parameters) if call is not None else []
    except (TypeError, ValueError):
        return None
    if params[:3] != ["mode", "options", "dynamic"] or call_params[:3] != ["self", "model_", "inputs_"]:
        return None

    class Recording(base):  # type: ignore[misc]
        def __call__(self, model_: Any, inputs_: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                graphs.append(graph_callers(torch, model_, root))
            except Exception:  # the record is evidence, never a reason to fail a compile
                graphs.append({})
            return super().__call__(model_, inputs_, *args, **kwargs)

    try:
        return Recording(mode, None, dynamic)
    except Exception:
        return None


def graph_callers(torch: Any, gm: Any, root: Any) -> dict[str, Any]:
    """``{"frame": path | None, "nodes": {node name: [innermost module path, ..., frame path]}}`` for the call
    nodes of the Dynamo graph ``gm`` of ``root``'s compile (``{}``: root is no module)."""
    if not isinstance(root, torch.nn.Module):
        return {}
    by_id: dict[int, str] = {}
    for name, module in root.named_modules(remove_duplicate=False):
        by_id.setdefault(id(module), name)
    stacks: dict[str, list[str]] = {}
    frames: set[str] = set()
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        paths: list[str] = []
        for key, value in (node.meta.get("nn_module_stack") or {}).items():
            spelled = str(value[0]) if isinstance(value, tuple) and value else ""
            path = _by_identity(key, by_id)
            if path is not None:
                frame = _frame_of(path, spelled)
                if frame is not None:
                    frames.add(frame)
            else:
                path = _by_spelling(spelled, value[1] if isinstance(value, tuple) and len(value) > 1 else None, root)
            if path is not None and path not in paths:
                paths.append(path)
        stacks[node.name] = paths[::-1]  # Dynamo lists the outermost first
    if frames:
        frame = frames.pop() if len(frames) == 1 else None
    else:
        frame = _frame_from_names(gm, root)
        if frame is None and _first_frame(torch):
            frame = ""  # the first frame Dynamo compiled in this process: the model's forward
    nodes = {}
    for name, paths in stacks.items():
        if frame is not None and (not paths or paths[-1] != frame):
            paths = [*paths, frame]
        if paths:
            nodes[name] = paths
    return {"frame": frame, "nodes": nodes}


def _frame_from_names(gm: Any, root: Any) -> str | None:
    """The frame's module from the names Dynamo gives the frame's parameters and buffers relative to it
    (``gm.meta["dynamo_flat_name_to_original_fqn"]``: "a.weight"): the module of the model under which every one of
    them is a parameter or buffer ("" the model itself). None: no names, or no such module."""
    rel = sorted({str(v) for v in (getattr(gm, "meta", None) or {}).get("dynamo_flat_name_to_original_fqn",
                                                                       {}).values()})
    if not rel:
        return None
    ordered: list[str] = [n for n, _ in root.named_parameters(remove_duplicate=False)] + [
        n for n, _ in root.named_buffers(remove_duplicate=False)]
    names = set(ordered)
    if all(r in names for r in rel):
        return ""
    first = "." + rel[0]
    # the first instance in the model's order: the one Dynamo traced first
    for prefix in dict.fromkeys(n[:-len(first)] for n in ordered if n.endswith(first)):
        if all(f"{prefix}.{r}" in names for r in rel):
            return prefix
    return None


def _first_frame(torch: Any) -> bool:
    """Whether the graph being compiled comes from the first frame Dynamo compiled in this process (frame id 0)."""
    try:
        from torch._guards import CompileContext

        compile_id = CompileContext.current_compile_id()
    except Exception:
        return False
    return getattr(compile_id, "frame_id", None) == 0


def _by_identity(key: Any, by_id: dict[int, str]) -> str | None:
    """The path of the module whose ``id()`` Dynamo keyed the entry by ("140534093031824", "140534093031824@1")."""
    head = str(key).split("@", 1)[0]
    return by_id.get(int(head)) if head.isdigit() else None


def _relative(spelled: str) -> tuple[str, str] | None:
    """Dynamo's spelling of a module's path -> (the frame's local it starts from, the dotted path below it):
    ``L['self'].layers[0].mlp`` -> ("self", "layers.0.mlp"); None when it is spelled some other way."""
    steps: list[str] = []
    text = spelled.strip()
    while (m := _GETATTR.match(text)) is not None:  # getattr(L['self'].layers, '0')
        steps.insert(0, m.group(2))
        text = m.group(1)
    root = _ROOT.match(text)
    if root is None:
        return None
    rest = text[root.end():]
    tail: list[str] = []
    while rest:
        step = _STEP.match(rest)
        if step is None:
            return None
        tail.append(next(g for g in step.groups() if g is not None))
        rest = rest[step.end():]
    # ._modules['mlp'] is the child mlp
    parts = [p for i, p in enumerate(tail) if not (p == "_modules" and i + 1 < len(tail))]
    return root.group(1), ".".join([*parts, *steps])


def _frame_of(path: str, spelled: str) -> str | None:
    """The frame's module path, from a module's full path and its spelling relative to the frame."""
    rel = _relative(spelled)
    if rel is None:
        return None
    below = rel[1]
    if not below:
        return path
    if path == below:
        return ""
    return path[:-len(below) - 1] if path.endswith("." + below) else None


def _by_spelling(spelled: str, cls: Any, root: Any) -> str | None:
    """The path Dynamo spelled from ``L['self']`` (the model's own forward), where the model has a module of the
    recorded class there."""
    rel = _relative(spelled)
    if rel is None or rel[0] != "self":
        return None
    try:
        module = root.get_submodule(rel[1])
    except AttributeError:
        return None
    kind = type(module)
    if cls is not None and cls is not kind and cls not in (kind.__name__, kind.__qualname__,
                                                            f"{kind.__module__}.{kind.__qualname__}"):
        return None
    return rel[1]
