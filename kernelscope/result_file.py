"""result.json: a run's facts, written and read here and nowhere else (kernelscope/result.py holds the types).

``profile``, ``analyze`` and ``upgrade-check`` write it through ``write_result``; ``report``, ``check``,
``compare`` and the upgrade comparison read it through ``load_result``. The schema is
``kernelscope.result/<N>``: a file of this N reads with every field added since it was written at its default
(old files stay readable); a file of a newer N says to upgrade kernelscope, one of an older N that no
migration below covers says to run the profile again. Either is one line (ResultError, exit code 2), never a
traceback or a half-read result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kernelscope import __version__
from kernelscope.errors import ResultError
from kernelscope.files import atomic_write_text
from kernelscope.result import SCHEMA, RunResult, run_from_json, to_json

RESULT_FILE = "result.json"
SCHEMA_PREFIX = "kernelscope.result/"
SCHEMA_VERSION = int(SCHEMA.rpartition("/")[2])

# The parts of a mode that kernelscope.result/1 kept as the worker's dicts, {} when not measured.
_V1_MODE_PARTS = ("memory", "numerics", "compile", "dynamo", "config")


def _v1_mode(mode: Any) -> Any:
    if not isinstance(mode, Mapping):
        return mode
    return {**mode, **{k: mode[k] or None for k in _V1_MODE_PARTS if k in mode}}


def migrate_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """kernelscope.result/1 -> /2: a mode's ``memory``, ``numerics``, ``compile``, ``dynamo`` and ``config`` and the
    run's ``environment`` became typed records (result.py) with the keys the worker wrote. Their keys are
    unchanged; what changed is "not measured": /1 wrote ``{}``, /2 writes null (an empty environment stays an
    environment with nothing recorded)."""
    out = dict(data)
    if isinstance(out.get("modes"), list):
        out["modes"] = [_v1_mode(m) for m in out["modes"]]
    if isinstance(out.get("points"), list):
        out["points"] = [{**p, "modes": [_v1_mode(m) for m in p["modes"]]}
                         if isinstance(p, Mapping) and isinstance(p.get("modes"), list) else p for p in out["points"]]
    out["environment"] = out.get("environment") or {}
    return out


def _legacy_evidence(e: Any) -> Any:
    """One /2 evidence entry ({"kind", "text", "where"}, or a bare string from before evidence was typed) as a
    ``legacy`` record that keeps its sentence as written."""
    if isinstance(e, str):
        return {"rule": "legacy", "kind": "note", "where": "", "facts": {"text": e}}
    if isinstance(e, Mapping) and "text" in e and "rule" not in e:
        return {"rule": "legacy", "kind": e.get("kind") or "note", "where": e.get("where") or "",
                "facts": {"text": e["text"]}}
    return e


def _legacy_gemm(g: Any) -> Any:
    if not isinstance(g, Mapping):
        return g
    out = dict(g)
    if isinstance(out.get("evidence"), list):
        out["evidence"] = [_legacy_evidence(e) for e in out["evidence"]]
    why = out.get("why_not")
    if isinstance(why, str):
        out["why_not"] = [{"reason": "legacy", "facts": {"text": why}}] if why else []
    return out


def _structured_gemm_evidence(data: dict[str, Any]) -> dict[str, Any]:
    """/2 -> /3 for GEMM verdicts: a GEMM's ``evidence`` became structured records (a rule code, its kind, where,
    the facts its sentence names) and its ``why_not`` a list of reasons (a reason code and facts) instead of one
    string. A recorded sentence cannot be taken apart again: each becomes one ``legacy`` record (rule or reason
    "legacy") that keeps it as its ``text`` fact, which the reports print as it was written."""

    def mode(m: Any) -> Any:
        if not isinstance(m, Mapping) or not isinstance(m.get("gemms"), list):
            return m
        return {**m, "gemms": [_legacy_gemm(g) for g in m["gemms"]]}

    return _each_mode(data, mode)


def _text_note(text: Any) -> dict[str, Any] | None:
    return {"code": "text", "args": {"text": text}} if isinstance(text, str) and text else None


def _v2_recommendation(rec: Any) -> Any:
    if not isinstance(rec, Mapping):
        return rec
    out = {k: v for k, v in rec.items() if k != "reason"}
    out["reasons"] = [n for n in (_text_note(rec.get("reason")),) if n]
    if isinstance(rec.get("candidates"), list):
        out["candidates"] = [{**c, "why_not": _text_note(c.get("why_not")),
                              "numerics_reason": _text_note(c.get("numerics_reason"))}
                             if isinstance(c, Mapping) else c for c in rec["candidates"]]
    return out


def _v2_mode(mode: Any) -> Any:
    if not isinstance(mode, Mapping):
        return mode
    return {**mode, "contradiction": _text_note(mode.get("contradiction"))}


def _each_mode(data: dict[str, Any], fix: Callable[[Any], Any]) -> dict[str, Any]:
    """``data`` with ``fix`` applied to every mode, the modes of every sweep point included."""
    out = dict(data)
    if isinstance(out.get("modes"), list):
        out["modes"] = [fix(m) for m in out["modes"]]
    if isinstance(out.get("points"), list):
        out["points"] = [{**p, "modes": [fix(m) for m in p["modes"]]}
                         if isinstance(p, Mapping) and isinstance(p.get("modes"), list) else p for p in out["points"]]
    return out


def migrate_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """kernelscope.result/2 -> /3: the facts the reports used to derive while rendering are in the result
    (result.py: a mode's ``speedup``, ``numerics_verdict``, ``fallback``, ``gemm_autotune``, its GEMM groups
    for every GEMM; the run's ``failure_groups``, ``tolerance`` and ``sweep_axis``): analysis derives them from
    the measurements the file holds once the file is read (``FACTS_SINCE``), as it does for a new run. What
    analysis says is data (``Note``): a recommendation's ``reason`` sentence became ``reasons``, a candidate's
    ``why_not`` and ``numerics_reason`` and a mode's ``contradiction`` a Note; the sentences of /2 are kept as
    "text" notes. GEMM evidence and why-nots became structured records (``_structured_gemm_evidence``)."""
    out = _each_mode(_structured_gemm_evidence(data), _v2_mode)
    if isinstance(out.get("recommendation"), list):
        out["recommendation"] = [_v2_recommendation(r) for r in out["recommendation"]]
    return out


def _text_notes(text: Any) -> list[dict[str, Any]]:
    """A /3 sentence (or a list of them, or notes already) as a list of Notes: each sentence a "text" note."""
    items = text if isinstance(text, list) else [text]
    return [n for n in (dict(i) if isinstance(i, Mapping) else _text_note(i) for i in items) if n]


def _v3_mode(mode: Any) -> Any:
    if not isinstance(mode, Mapping):
        return mode
    out = dict(mode)
    lat = out.get("latency_ms")
    if isinstance(lat, Mapping) and "outliers" in lat:
        out["latency_ms"] = {**lat, "outliers": _text_notes(lat["outliers"])}
    its = out.get("iterations")
    if isinstance(its, Mapping) and "note" in its:
        out["iterations"] = {**{k: v for k, v in its.items() if k != "note"}, "notes": _text_notes(its["note"])}
    launch = out.get("launch")
    if isinstance(launch, Mapping):
        out["launch"] = {k: v for k, v in launch.items() if k != "note"}
    if isinstance(out.get("autotune"), list):
        out["autotune"] = [{**{k: v for k, v in a.items() if k != "note"}, "notes": _text_notes(a.get("note"))}
                           if isinstance(a, Mapping) and "note" in a else a for a in out["autotune"]]
    cov = out.get("gemm_coverage")
    if isinstance(cov, Mapping):
        cov = dict(cov)
        if not isinstance(cov.get("vs_eager"), (Mapping, type(None))):
            cov["vs_eager"] = _text_note(cov.get("vs_eager"))
        if isinstance(cov.get("unattributed"), list):
            cov["unattributed"] = [{**u, "reason": _text_note(u.get("reason"))}
                                   if isinstance(u, Mapping) and isinstance(u.get("reason"), str) else u
                                   for u in cov["unattributed"]]
        out["gemm_coverage"] = cov
    return out


def _v3_peaks(peaks: Any) -> Any:
    if not isinstance(peaks, Mapping):
        return peaks
    return {k: {**v, "notes": _text_notes(v["notes"])} if isinstance(v, Mapping) and "notes" in v else v
            for k, v in peaks.items()}


def migrate_3_to_4(data: dict[str, Any]) -> dict[str, Any]:
    """kernelscope.result/3 -> /4: what analysis said in sentences is data (``Note``): a latency's ``outliers``,
    an autotune table's ``note`` (now ``notes``), the iterations' ``note`` (now ``notes``), the GEMM count against
    eager (``gemm_coverage.vs_eager``), why a GEMM-class op is not attributed (``gemm_coverage.unattributed[]
    .reason``) and the device peaks' ``notes``; the run's own notes are ``findings``. The
    launch profile's ``note`` went: its facts are the launch profile's numbers, said by the mode's "gpu-idle"
    finding. The sentences of /3 are kept as "text" notes, which the reports print as they were written."""
    out = _each_mode(data, _v3_mode)
    if "peaks" in out:
        out["peaks"] = _v3_peaks(out["peaks"])
    return out


# Older schema version -> the function that turns such a result.json's object into the next version's. When a
# change to result.py renames or removes a field or changes its shape, or adds a fact older files must have,
# bump SCHEMA and add the step here (a new field whose default says "not recorded" needs neither).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: migrate_1_to_2, 2: migrate_2_to_3, 3: migrate_3_to_4,
}
# A file of a schema before this one holds none of the facts analysis derives from the measurements
# (analysis/facts.py): they are derived when it is read.
FACTS_SINCE = 3


def result_path(path: str | os.PathLike[str]) -> Path:
    """A result directory (holding result.json) or the result.json file itself -> the result.json path."""
    p = Path(path)
    return p / RESULT_FILE if p.is_dir() else p


def dumps_result(result: RunResult) -> str:
    """result.json's text: the RunResult as plain JSON (no NaN: they are written as null)."""
    return json.dumps(to_json(result), indent=1, allow_nan=False) + "\n"


def write_result(path: str | os.PathLike[str], result: RunResult, text: str | None = None) -> Path:
    """Write result.json atomically into ``path`` (a directory) or to ``path`` (a file name ending .json).
    ``text``: ``dumps_result(result)`` when the caller has it already (the reports embed the same text)."""
    p = Path(path)
    file = p if p.suffix == ".json" else p / RESULT_FILE
    return atomic_write_text(file, dumps_result(result) if text is None else text)


def schema_version(schema: str) -> int | None:
    """N of ``kernelscope.result/N``; None when ``schema`` is not a kernelscope result schema."""
    if not schema.startswith(SCHEMA_PREFIX):
        return None
    tail = schema[len(SCHEMA_PREFIX):]
    return int(tail) if tail.isdigit() else None


def result_from_json(data: Any, where: str = RESULT_FILE) -> RunResult:
    """A RunResult from result.json's object, migrated from an older schema where a migration exists.

    ResultError (one line, what to do) when it is not a kernelscope result, when its schema is newer than this
    kernelscope's or older than any migration reaches, or when a field does not fit its type."""
    schema = data.get("schema") if isinstance(data, Mapping) else None
    if not isinstance(schema, str) or not schema.startswith(SCHEMA_PREFIX):
        raise ResultError(f"{where} is not a kernelscope result (no 'schema': '{SCHEMA}')",
                          "pass the result.json that kernelscope wrote")
    version = schema_version(schema)
    if version is None:
        raise ResultError(f"{where} has schema {schema!r}, which no kernelscope writes",
                          "pass the result.json that kernelscope wrote")
    tool = data.get("tool_version")
    origin = f"kernelscope {tool}" if isinstance(tool, str) else "another kernelscope"
    if version > SCHEMA_VERSION:
        raise ResultError(f"{where} has schema {schema!r}; this kernelscope reads {SCHEMA!r} (written by {origin}, "
                          f"newer than this kernelscope {__version__})",
                          "upgrade kernelscope (pip install -U kernelscope) to read it")
    data = dict(data)
    derive = version < FACTS_SINCE
    try:
        while version < SCHEMA_VERSION:
            step = MIGRATIONS.get(version)
            if step is None:
                raise ResultError(f"{where} has schema {schema!r}; this kernelscope reads {SCHEMA!r} and cannot "
                                  f"convert it (written by {origin}, older than this kernelscope {__version__})",
                                  "run `kernelscope profile` (or `kernelscope analyze`) again to write it in the "
                                  "current schema, or re-render it with the kernelscope version that wrote it")
            data = step(data)
            version += 1
            data["schema"] = f"{SCHEMA_PREFIX}{version}"
        run = run_from_json(data)
        if derive:
            from kernelscope.analysis.facts import with_facts  # (result.json is analysis's output: its facts are too)

            run = with_facts(run)
        return run
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ResultError(f"{where} does not match schema {SCHEMA}: {exc}",
                          "re-run kernelscope to write it again") from exc


def load_result(path: str | os.PathLike[str]) -> RunResult:
    """Read a run's result.json (given its directory or the file) into a RunResult.

    Raises ResultError (exit code 2) with the path and what to do when the file is missing, is not JSON, or is
    not a result this kernelscope reads (see ``result_from_json``).
    """
    file = result_path(path)
    if not file.exists():
        raise ResultError(
            f"{file} does not exist",
            "pass a directory written by `kernelscope profile` or `kernelscope analyze` (it holds result.json)",
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResultError(f"cannot read {file}: {exc}", "re-run kernelscope to write it again") from exc
    return result_from_json(data, str(file))
