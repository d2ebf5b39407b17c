"""The methods ``dataclasses`` writes for kernelscope's dataclasses, compiled once and kept between runs.

For each dataclass, ``dataclasses`` writes ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and
``__delattr__`` as source text and compiles it when the class is made, at import: ~650 compilations for kernelscope's
111 dataclasses, a tenth of a second at every start of every kernelscope process (a fifth of what ``kernelscope
analyze`` spends outside the trace on a 1M-event trace). Compiling the same text gives the same code, so the code
compiled from each text is kept, like a module's in its .pyc: marshalled, per Python version, in
kernelscope/__pycache__, and handed to ``dataclasses`` instead of the text.

``dataclasses`` runs the text with the builtin ``exec``; a module-level ``exec`` in its namespace is found first, and
this one runs the kept code (compiling and keeping what is new). Only kernelscope's own classes are kept (the text's
globals are a kernelscope module's); everything else is compiled as before. ``KERNELSCOPE_NO_CODE_CACHE=1`` leaves
``dataclasses`` alone, ``KERNELSCOPE_CODE_CACHE=FILE`` keeps the code in FILE; a cache that cannot be read is ignored
and one that cannot be written is not written (``PYTHONDONTWRITEBYTECODE`` is followed, as for .pyc files).
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

# (KERNELSCOPE_CODE_CACHE names another file: a read-only install, the tests)
_PATH = Path(os.environ.get("KERNELSCOPE_CODE_CACHE") or
             Path(__file__).resolve().parent / "__pycache__" / f"dataclass-code.{sys.implementation.cache_tag}.marshal")
_MAGIC = b"kernelscope dataclass code 1\n"

# sha1 of the text -> its code, read from _PATH; and what this process compiled that was not there
_kept: dict[bytes, CodeType] = {}
_new: dict[bytes, CodeType] = {}
stats = {"kept": 0, "compiled": 0}


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    name = globals.get("__name__", "") if isinstance(globals, dict) else ""
    if not isinstance(source, str) or not (name == "kernelscope" or name.startswith("kernelscope.")):
        builtins.exec(source, globals, locals)
        return
    key = hashlib.sha1(source.encode()).digest()
    code = _kept.get(key) or _new.get(key)
    if code is None:
        code = _new[key] = compile(source, "<string>", "exec")  # what exec(source) compiles
        stats["compiled"] += 1
    else:
        stats["kept"] += 1
    builtins.exec(code, globals, locals)


def _read() -> None:
    try:
        data = _PATH.read_bytes()
    except OSError:
        return
    if not data.startswith(_MAGIC):
        return
    try:
        table = marshal.loads(data[len(_MAGIC):])
    except (EOFError, ValueError, TypeError):
        return
    if isinstance(table, dict):
        _kept.update((k, v) for k, v in table.items() if isinstance(k, bytes) and isinstance(v, CodeType))


def save() -> None:
    """Write the kept code with what this process compiled (nothing to do when it compiled nothing)."""
    if not _new or sys.dont_write_bytecode:
        return
    table = {**_kept, **_new}
    tmp = _PATH.with_name(f"{_PATH.name}.{os.getpid()}.tmp")
    try:
        _PATH.parent.mkdir(exist_ok=True)
        tmp.write_bytes(_MAGIC + marshal.dumps(table))
        os.replace(tmp, _PATH)  # whole or not at all, whichever process writes last
    except OSError:
        tmp.unlink(missing_ok=True)
        return
    _kept.update(_new)
    _new.clear()


def install() -> None:
    if os.environ.get("KERNELSCOPE_NO_CODE_CACHE", "") not in ("", "0") or "exec" in vars(dataclasses):
        return
    _read()
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    import atexit

    atexit.register(save)
