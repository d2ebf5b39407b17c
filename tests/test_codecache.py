"""kernelscope/_codecache.py: dataclasses' generated methods for kernelscope's classes, compiled once and kept.

Each check runs fresh interpreters (the cache is read at import and written at exit) against a cache file of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The methods of every dataclass of the result and analysis modules, as code: what dataclasses made of them.
PROBE = r"""
import dataclasses, hashlib, json, sys
import kernelscope.result, kernelscope.analysis.mode, kernelscope.report.context
from kernelscope import _codecache
digest = {}
for mod in (kernelscope.result, kernelscope.analysis.mode, kernelscope.report.context):
    for name, cls in sorted(vars(mod).items()):
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == mod.__name__:
            for m in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
                f = cls.__dict__.get(m)
                c = getattr(f, "__code__", None)
                if c is not None:
                    what = (c.co_code, c.co_consts, c.co_names, c.co_varnames, c.co_argcount, c.co_kwonlyargcount,
                            c.co_filename, c.co_name, f.__defaults__, f.__kwdefaults__, f.__qualname__)
                    digest[f"{cls.__module__}.{name}.{m}"] = hashlib.sha1(repr(what).encode()).hexdigest()
@dataclasses.dataclass(frozen=True)
class Outside:  # a class of another module (__main__): compiled as ever, never kept
    x: int = 1
assert Outside() == Outside() and hash(Outside(2)) == hash(Outside(2))
print(json.dumps({"stats": _codecache.stats, "digest": digest}))
"""


def _run(cache: Path, **env: str) -> dict:
    full = {**os.environ, "KERNELSCOPE_CODE_CACHE": str(cache), **env}
    full.pop("PYTHONDONTWRITEBYTECODE", None)
    full.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_second_process_compiles_nothing_and_gets_the_same_methods(tmp_path: Path) -> None:
    cache = tmp_path / "code.marshal"
    first = _run(cache)
    assert cache.is_file()
    second = _run(cache)
    off = _run(tmp_path / "unused", KERNELSCOPE_NO_CODE_CACHE="1")
    assert first["stats"]["compiled"] >= 200 and first["stats"]["kept"] == 0
    assert second["stats"] == {"kept": first["stats"]["compiled"], "compiled": 0}
    assert off["stats"] == {"kept": 0, "compiled": 0}  # dataclasses left alone
    assert len(off["digest"]) >= 200
    assert first["digest"] == second["digest"] == off["digest"]
    assert not (tmp_path / "unused").exists()


def test_a_damaged_cache_is_ignored_and_written_again(tmp_path: Path) -> None:
    cache = tmp_path / "code.marshal"
    good = _run(cache)
    for damage in (b"", b"not a cache", cache.read_bytes()[:1000]):
        cache.write_bytes(damage)
        again = _run(cache)
        assert again["stats"]["compiled"] == good["stats"]["compiled"]
        assert again["digest"] == good["digest"]
        assert _run(cache)["stats"]["compiled"] == 0  # rewritten whole


def test_no_bytecode_writing_means_no_cache_file(tmp_path: Path) -> None:
    cache = tmp_path / "code.marshal"
    _run(cache, PYTHONDONTWRITEBYTECODE="1")
    assert not cache.exists()


def test_the_analyze_command_line_keeps_its_code_too(tmp_path: Path) -> None:
    """`kernelscope analyze` ends with os._exit (no atexit): it writes the cache itself."""
    cache = tmp_path / "code.marshal"
    trace = next(p for p in sorted((Path(__file__).parent / "data").rglob("*.trace.json*")))
    env = {**os.environ, "KERNELSCOPE_CODE_CACHE": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "kernelscope", "analyze", str(trace), "--out", str(tmp_path / "out")],
                   env=env, capture_output=True, check=True)
    assert cache.is_file() and cache.stat().st_size > 10_000
