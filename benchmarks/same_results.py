"""Check that a change leaves `kernelscope analyze`'s results as they were, on every recorded trace.

Each trace (every .json / .json.gz under the given paths, and those inside the .tar.gz / .tar.xz archives of recorded
runs, extracted under --workdir), with the ``<stem>.code.py`` beside it as --code where there is one, is analysed in
a fresh interpreter by the kernelscope source tree given with --tree. What is compared: the exit code and result.json
less its creation time and command line (which names the output folder), or the last error line where no result.json
was written (files that are not traces). ``--save`` records one tree's results, ``--against`` compares with a record;
the last line says how many results differ.

    python benchmarks/same_results.py --tree /path/to/reference --save /tmp/before.json tests/data
    python benchmarks/same_results.py --tree . --against /tmp/before.json tests/data
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SKIP = ("result.json", ".provenance.json", "capture.json", "manifest.json")
ARCHIVES = (".tar.gz", ".tar.xz")


def _extract(archive: Path, workdir: Path) -> Path:
    """The archive's files under workdir/<its folder>/<its name>, extracted once (the same paths for every run)."""
    dest = workdir / archive.parent.name / archive.name
    done = dest / ".extracted"
    if not done.is_file():
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
        done.touch()
    return dest


def traces(paths: list[Path], workdir: Path) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        files = [p] if p.is_file() else sorted(p.rglob("*"))
        for f in files:
            if f.name.endswith(ARCHIVES):
                out += traces([_extract(f, workdir)], workdir)
            elif f.name.endswith((".json", ".json.gz")) and not f.name.endswith(SKIP):
                out.append(f.resolve())
    return list(dict.fromkeys(out))  # (a file named twice is analysed once)


def analyze(tree: Path, trace: Path) -> tuple[int, Any]:
    """(exit code, result.json less its per-run fields, or the last line of stderr when there is none)."""
    code = trace.with_name(trace.name.split(".json")[0].removesuffix(".trace") + ".code.py")
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "kernelscope", "analyze", str(trace), "--out", out, "--force"]
        if code.is_file():
            cmd += ["--code", str(code)]
        # cwd outside the tree: `python -m` puts the working directory first on sys.path
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
        result = Path(out) / "result.json"
        if not result.is_file():
            lines = proc.stderr.strip().splitlines()
            return proc.returncode, lines[-1].replace(out, "OUT") if lines else ""
        data = json.loads(result.read_text())
        data.pop("created", None)
        data.pop("command", None)
        return proc.returncode, data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", type=Path, nargs="+", help="trace files, archives, or folders to search for them")
    ap.add_argument("--tree", type=Path, required=True, help="the kernelscope source tree (repository root) to run")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--save", type=Path, help="write the results to this JSON file")
    what.add_argument("--against", type=Path, help="compare with the results saved in this file")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kernelscope-same-results",
                    help="where archives are extracted (kept: the same paths in every run)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    files = traces(args.paths, args.workdir)
    with ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(map(str, files), pool.map(lambda t: list(analyze(args.tree, t)), files)))
    if args.save:
        args.save.write_text(json.dumps(results))
        failed = sum(1 for rc, _ in results.values() if rc)
        print(f"{len(files)} files analysed ({failed} refused with an error), saved to {args.save}")
        return 0
    reference = json.loads(args.against.read_text())
    diffs = []
    for name, (rc, got) in results.items():
        if name not in reference:
            diffs.append(f"NOT IN THE REFERENCE: {name}")
        elif reference[name] != [rc, got]:
            diffs.append(f"DIFFERS: {name} (exit {reference[name][0]} -> {rc})")
    diffs += [f"MISSING: {name}" for name in reference if name not in results]
    for d in diffs:
        print(d)
    print(f"{len(results)} files, {len(diffs)} differ from {args.against}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
