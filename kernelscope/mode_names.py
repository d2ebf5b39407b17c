"""A ``--modes`` name as text, and the ``torch.compile`` options it stands for. No torch import.

A name is ``BASE[:B1+B2][@OPTION=VALUE...]``: a base mode (capture/modes.py says what each means), the GEMM
backends pinned for max-autotune, and Inductor options set for that mode alone, as Inductor names them
(``max-autotune:TRITON@benchmark_epilogue_fusion=off``, ``max-autotune:CPP@freezing=on``). capture/modes.py parses
names into the modes a run starts; analysis/advice.py writes the names of the settings it proposes, so both read
one grammar.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kernelscope.errors import UsageError

OPTION_SEP = "@"
_OPTION_NAME = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$")
_OPTION_TEXT = re.compile(r"^[A-Za-z0-9_.]+$")

OptionValue = bool | int | str

# What each compiled base mode passes to torch.compile, as the options torch.compile(options=...) takes (torch
# 2.14.1's torch._inductor.list_mode_options): kernelscope's max-autotune compiles with mode
# "max-autotune-no-cudagraphs". torch.compile takes a mode or options, never both, so the line a user copies
# writes the mode's options out.
MODE_OPTIONS: dict[str, dict[str, OptionValue]] = {
    "default": {},
    "dynamic": {},
    "max-autotune": {"max_autotune": True, "coordinate_descent_tuning": True},
    "reduce-overhead": {"triton.cudagraphs": True},
}

# Inductor options kernelscope sets for its own reading (the C++ kernels in the trace, provenance comments): they
# change no kernel, so a user's torch.compile line leaves them out.
BOOKKEEPING_OPTIONS = frozenset({"cpp.enable_kernel_profile", "trace.provenance_tracking_level"})


def option_value(text: str) -> OptionValue:
    """"on"/"true" -> True, "off"/"false" -> False, digits -> int, else the text (letters, digits, '_', '.')."""
    low = text.lower()
    if low in ("on", "true"):
        return True
    if low in ("off", "false"):
        return False
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if not _OPTION_TEXT.match(text):
        raise UsageError(f"option value {text!r}", "use on, off, a number or a name of letters, digits, _ and .")
    return text


def option_text(value: object) -> str:
    """The inverse of ``option_value``: True -> "on", False -> "off"."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    return str(value)


def split_options(name: str) -> tuple[str, dict[str, OptionValue]]:
    """"max-autotune:CPP@freezing=on" -> ("max-autotune:CPP", {"freezing": True})."""
    head, *parts = name.split(OPTION_SEP)
    options: dict[str, OptionValue] = {}
    for part in parts:
        key, eq, value = part.partition("=")
        if not eq or not _OPTION_NAME.match(key) or not value:
            raise UsageError(f"mode {name!r}: option {part!r} is not NAME=VALUE",
                             "name an Inductor option, e.g. max-autotune@benchmark_epilogue_fusion=off")
        if key in options:
            raise UsageError(f"mode {name!r}: option {key!r} is given twice", "give each option once")
        options[key] = option_value(value)
    return head, options


def mode_name(base: str, backends: Sequence[str] | None = None,
              options: Mapping[str, OptionValue] | None = None) -> str:
    """The name of a mode: ``base``, its pinned backends (max-autotune) and its options, sorted by name."""
    name = base + (":" + "+".join(backends) if backends else "")
    for key in sorted(options or {}):
        name += f"{OPTION_SEP}{key}={option_text((options or {})[key])}"
    return name


def compile_options(base: str, backends: Sequence[str] | None, inductor: Mapping[str, object],
                    freezing: bool | None) -> dict[str, object]:
    """What ``torch.compile(model, options=...)`` needs to compile as the mode did: the base mode's options, the
    pinned GEMM backends, freezing when it was on (off is Inductor's default), and the mode's own options."""
    out: dict[str, object] = dict(MODE_OPTIONS.get(base, {}))
    if backends:
        out["max_autotune_gemm_backends"] = ",".join(backends)
    if freezing:
        out["freezing"] = True
    out.update((k, v) for k, v in inductor.items() if k not in BOOKKEEPING_OPTIONS)
    if out.get("freezing") is False:
        del out["freezing"]
    return out
