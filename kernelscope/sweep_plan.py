"""Shape sweeps: parse ``--sweep NAME=V1,V2``, combine with a model file's ``get_input_sweep()`` points, name them.

The capture plan (the runner starts one worker per point). Pure (no torch): the parent plans the points, each
worker builds the model at its point. A base module (it was capture/sweep.py): the profile command plans with it,
capture/runner.py runs its ``PointPlan``s and analysis/sweep.py reads them, and analysis imports nothing of capture.
A point is either a set
of module-level constant overrides (``{"batch_size": 16}``, applied like ``--set``) or, from the hook, the index of
an explicit input list; ``params`` is what the report shows for it.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from kernelscope.errors import UsageError

MAX_POINTS = 64  # a sweep is a table in a report, not a search: past this it is a typo (or a job for a script)


@dataclass(frozen=True, slots=True)
class PointPlan:
    """One shape point of a run: what to override, what to call it, where its files go."""

    index: int
    params: dict[str, Any]  # shown in the report and result.json
    sets: dict[str, Any] = field(default_factory=dict)  # constants to override before building
    input_index: int | None = None  # index into get_input_sweep()'s list when the hook gives inputs
    label: str = ""
    dirname: str = ""


def parse_values(raw: str) -> list[Any]:
    """``1,16,256`` -> [1, 16, 256]; ``(1,2),(3,4)`` -> [(1, 2), (3, 4)]; ``gelu,relu`` -> ["gelu", "relu"]."""
    return [ast_or_str(part) for part in _split_top_level(raw.strip()) if part.strip()]


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside quotes and brackets, so tuples and quoted strings with commas stay whole."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def ast_or_str(text: str) -> Any:
    text = text.strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_sweeps(items: tuple[str, ...] | list[str]) -> dict[str, list[Any]]:
    """``--sweep NAME=V1,V2`` options -> {NAME: [V1, V2]} (one entry per option, in order)."""
    out: dict[str, list[Any]] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise UsageError(f"--sweep {item!r} is not NAME=V1,V2,...",
                             "write it as --sweep batch_size=1,16,256 (NAME is a module-level constant)")
        values = parse_values(raw)
        if not values:
            raise UsageError(f"--sweep {name}= lists no values", "give at least one value: --sweep batch_size=1,16")
        if len(set(map(repr, values))) != len(values):
            raise UsageError(f"--sweep {name} lists a value twice", "list each value once")
        if name in out:
            raise UsageError(f"--sweep {name} is given twice", "give each constant one --sweep with all its values")
        out[name] = values
    return out


def _label(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in params.items()) or "default"


_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")


def _dirname(index: int, label: str) -> str:
    # p<index> first: unique and sorted in sweep order whatever the values; the rest only helps a human. Only
    # letters, digits, "_" and single "-" survive: no "/", no "..", nothing a shell or a URL would read.
    body = _UNSAFE.sub("-", label.replace(", ", "_")).strip("-_")[:60]
    return f"p{index}-{body}" if body else f"p{index}"


def plan_points(sweeps: dict[str, list[Any]], input_points: list[dict[str, Any]] | None = None) -> list[PointPlan]:
    """The Cartesian product of the --sweep values, times the hook's points when the model file has them.

    ``input_points``: what the worker reported for ``get_input_sweep()``, one dict per entry: ``{"params": {...}}``
    plus ``"sets"`` for a constants entry or ``"input_index"`` for an explicit input list.
    """
    names = list(sweeps)
    combos = [dict(zip(names, vals)) for vals in itertools.product(*(sweeps[n] for n in names))] or [{}]
    hooks = input_points or [{}]
    total = len(combos) * len(hooks)
    if total > MAX_POINTS:
        raise UsageError(f"the sweep has {total} points (more than {MAX_POINTS})",
                         "sweep fewer values, or script several runs")
    points: list[PointPlan] = []
    for combo in combos:
        for hook in hooks:
            params = {**combo, **(hook.get("params") or {})}
            sets = {**combo, **(hook.get("sets") or {})}
            i = len(points)
            label = _label(params)
            points.append(PointPlan(index=i, params=params, sets=sets, input_index=hook.get("input_index"),
                                    label=label, dirname=_dirname(i, label)))
    return points


def describe_hook_entry(entry_kind: str, index: int, detail: Any) -> dict[str, Any]:
    """Normalise what the worker saw in get_input_sweep()[index] into the plan's input point dict.

    entry_kind "sets": detail is the dict of constants; "inputs": detail is a short text of the input shapes.
    """
    if entry_kind == "sets":
        return {"params": dict(detail), "sets": dict(detail)}
    return {"params": {"inputs": str(detail)}, "input_index": index}


def defines_input_sweep(path: str) -> bool:
    """Whether a model file defines get_input_sweep() at module level (read without running it)."""
    try:
        tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "get_input_sweep"
               for n in tree.body)
