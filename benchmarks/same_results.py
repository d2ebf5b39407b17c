"""Check that two kernelscope source trees write the same result.json for the same traces.

For a change meant to make `kernelscope analyze` faster and nothing else: each trace (every .json / .json.gz under
the given paths, with the `<stem>.code.py` beside it as --code where there is one) is analysed by both trees in
fresh interpreters, and result.json (less its creation time and the command line, which names the output folder)
is compared, with the exit code and, for files that are not traces, the error line. Prints one line per
difference and exits 1 on any.

    git worktree add /tmp/before <commit>
    python benchmarks/same_results.py /tmp/before . tests/data /tmp/kernelscope-bench/seed-default-1M
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SKIP = ("result.json", ".provenance.json", "capture.json", "manifest.json")


def traces(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        files = [p] if p.is_file() else sorted(p.rglob("*.json*"))
        out += [f for f in files if f.name.endswith((".json", ".json.gz")) and not f.name.endswith(SKIP)]
    return out


def analyze(tree: Path, trace: Path) -> tuple[int, object]:
    """(exit code, result.json less its per-run fields, or the last line of stderr when there is none)."""
    code = trace.with_name(trace.name.split(".json")[0].removesuffix(".trace") + ".code.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree.resolve())
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "kernelscope", "analyze", str(trace.resolve()), "--out", out, "--force"]
        if code.is_file():
            cmd += ["--code", str(code.resolve())]
        # cwd outside both trees: `python -m` puts the working directory first on sys.path
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
    ap.add_argument("before", type=Path, help="source tree (repository root) of the reference")
    ap.add_argument("after", type=Path, help="source tree of the change")
    ap.add_argument("paths", type=Path, nargs="+", help="trace files or folders to search for traces")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    files = traces(args.paths)

    def check(trace: Path) -> str | None:
        a, b = analyze(args.before, trace), analyze(args.after, trace)
        return None if a == b else f"DIFFERS: {trace} (exit {a[0]} -> {b[0]})"

    with ThreadPoolExecutor(args.jobs) as pool:
        diffs = [d for d in pool.map(check, files) if d]
    for d in diffs:
        print(d)
    print(f"{len(files)} files, {len(diffs)} differ")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
