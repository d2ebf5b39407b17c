"""The documentation stays true to the code.

- docs/cli.md is exactly what docs/gen_cli.py writes from the click commands;
- docs/result-json.md documents every field of kernelscope/result.py's records (and of the records they hold) and no
  field they lack, each under a path that leads to that record from the top of result.json, and every key
  compare.json is written with; its code tables (evidence rules, why-not reasons, note codes with their args) are
  what docs/gen_codes.py writes;
- every ``kernelscope ...`` command in a code block of README.md or docs/*.md parses against the CLI as written,
  and the repository files it names exist;
- the README stays a front door (at most 250 lines, the two quick-start commands CI runs).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib.util
import re
import shlex
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

import kernelscope.result as result_module
from kernelscope.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
RESULT_MD = DOCS / "result-json.md"
UPGRADE_RUN = ROOT / "tests" / "data" / "h200-torch2.14.1-kernelscope-run" / "up-seed"  # before/ and after/


def _docs_script(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _docs_script("gen_cli")
GEN_CODES = _docs_script("gen_codes")


# --------------------------------------------------------------------------------------------------- CLI reference
def test_cli_md_is_what_gen_cli_writes():
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == GEN.render(), (
        "docs/cli.md is stale: run python docs/gen_cli.py")


def test_cli_md_does_not_depend_on_a_command_run_alone_before_it():
    # GIVEN a command run on its own first (click then caches its help option with only --help, as a test does)
    from click.testing import CliRunner

    from kernelscope.commands.profile import command

    assert CliRunner().invoke(command, ["--help"]).exit_code == 0
    # WHEN the reference is rendered THEN it still names the group's -h/--help for every command
    assert GEN.render() == (DOCS / "cli.md").read_text(encoding="utf-8")


def test_gen_cli_documents_every_command_the_cli_has(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    table = capsys.readouterr().out.split("Commands:", 1)[1]
    listed = {line.split()[0] for line in table.splitlines() if re.match(r"^  [a-z]", line)}
    documented = set(re.findall(r"^## kernelscope (\S+)", GEN.render(), re.M))
    assert len(listed) >= 7 and documented == listed == set(GEN.commands())


# --------------------------------------------------------------------------------------- commands shown in the docs
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
SEPARATORS = {"&&", "||", ";", "|"}
REPO_DIRS = ("samples/", "tests/", "benchmarks/", "docs/")


def shown_commands(text: str) -> list[list[str]]:
    """Every ``kernelscope`` command line in the fenced code blocks of ``text``, as argument lists (shell
    continuations joined, comments dropped, ``a && b`` split; a GitHub Actions ``- run:`` step read as its
    command)."""
    found = []
    for block in FENCE.findall(text):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = re.sub(r"^\s*(?:\$ |- run: )", "", line)
            try:
                tokens = shlex.split(line, comments=True)
            except ValueError:  # not shell (Python, YAML, output)
                continue
            segment: list[str] = []
            for token in [*tokens, ";"]:
                if token not in SEPARATORS:
                    segment.append(token)
                    continue
                if segment[:1] == ["kernelscope"]:
                    found.append(segment[1:])
                segment = []
    return found


SHOWN = [(page.relative_to(ROOT).as_posix(), args) for page in PAGES
         for args in shown_commands(page.read_text(encoding="utf-8"))]


def test_the_docs_show_the_everyday_commands():
    shown = {args[0] for _, args in SHOWN if args}
    assert {"profile", "upgrade-check", "compare", "check", "report", "analyze"} <= shown
    assert len(SHOWN) >= 15


@pytest.mark.parametrize("page,args", SHOWN, ids=[f"{p}:{' '.join(a)[:60]}" for p, a in SHOWN])
def test_a_command_the_docs_show_parses(page, args):
    commands = GEN.commands()
    assert args and args[0] in commands, f"{page}: kernelscope {' '.join(args)}: no such command"
    command = commands[args[0]]
    try:
        with command.make_context(f"kernelscope {args[0]}", list(args[1:])):
            pass
    except click.ClickException as exc:
        pytest.fail(f"{page}: kernelscope {' '.join(args)}: {exc.format_message()}")
    for arg in args[1:]:
        for value in arg.split("=", 1)[-1:]:
            if value.startswith(REPO_DIRS):
                assert list(ROOT.glob(value)), f"{page}: kernelscope {' '.join(args)}: {value} does not exist"


def test_shown_commands_reads_shell_as_a_reader_would():
    text = ("```bash\npip install -e . && kernelscope profile m.py  # comment\nkernelscope check d \\\n"
            "    --numerics\n```\n```yaml\n      - run: kernelscope report ks\n```\n```\nkernelscope: error: x\n```\n")
    assert shown_commands(text) == [["profile", "m.py"], ["check", "d", "--numerics"], ["report", "ks"]]


# ------------------------------------------------------------------------------------------------------- README
def test_the_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    # .ci/run executes exactly these two
    assert "pip install -e . && kernelscope profile samples/linear_gelu.py\n" in text
    assert "pip install -e '.[test,zoo]' && python -m pytest -q -n 2\n" in text
    for link in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)", text):
        assert (ROOT / link).exists() or link == "benchmarks/README.md", link


def test_the_docs_speak_of_the_product_not_its_history():
    history = re.compile(r"\b(issue|session)s? #?[0-9]+|\blease[sd]?\b|RESULTS\.md", re.I)
    found = [f"{page.name}:{n}: {line}" for page in PAGES
             for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if history.search(line)]
    assert not found


def test_links_between_the_pages_lead_somewhere():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+\.(?:md|py|png))(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            path = (page.parent / target).resolve()
            assert path.exists() or path == ROOT / "benchmarks" / "README.md", f"{page.name}: {target}"


# ----------------------------------------------------------------------------------------------- result.json fields
BLOCK = re.compile(r"^\*\*`(?P<path>[^`]+)`\*\* \(`(?P<record>[\w-]+)`\)")
ROW = re.compile(r"^\| `(?P<key>[^`]+)` \|")


def documented_blocks(text: str) -> list[tuple[str, str, list[str]]]:
    """(path, record, keys) for each ``**`path`** (`Record`)`` paragraph and the key column of its table."""
    blocks: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        if m := BLOCK.match(line):
            blocks.append((m["path"], m["record"], []))
        elif line.startswith("#"):
            blocks.append(("", "", []))  # a heading ends the block
        elif (m := ROW.match(line)) and blocks:
            blocks[-1][2].append(m["key"])
    return [b for b in blocks if b[1]]


def _records() -> dict[str, type]:
    """result.py's records, and every record a result.json holds that is defined elsewhere (``Tolerance``)."""
    records = {name: cls for name, cls in vars(result_module).items()
               if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == result_module.__name__}
    todo: list[Any] = [result_module.RunResult]
    seen: set[type] = set()
    while todo:
        tp = todo.pop()
        if isinstance(tp, type) and dataclasses.is_dataclass(tp) and tp not in seen:
            seen.add(tp)
            records.setdefault(tp.__name__, tp)
            todo += typing.get_type_hints(tp).values()
        elif not isinstance(tp, type):
            todo += typing.get_args(tp)
    return records


def _json_key(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get("json", f.name))


def _unwrap(tp: Any) -> Any:
    if typing.get_origin(tp) is typing.Union or isinstance(tp, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def resolve(path: str) -> Any:
    """The type at ``path`` in result.json: ``result.json`` is the top level, ``a.b`` a key, ``a[]`` an element
    of a list, ``a{}`` a value of an object."""
    tp: Any = result_module.RunResult
    if path == "result.json":
        return tp
    for segment in path.split("."):
        m = re.fullmatch(r"(\w+)((?:\[\]|\{\})*)", segment)
        assert m, f"{path}: {segment!r} is not a key"
        assert isinstance(tp, type) and dataclasses.is_dataclass(tp), f"{path}: {segment} is below a plain value"
        fields = {_json_key(f): f.name for f in dataclasses.fields(tp)}
        assert m[1] in fields, f"{path}: {tp.__name__} has no key {m[1]}"
        tp = _unwrap(typing.get_type_hints(tp)[fields[m[1]]])
        for container in re.findall(r"\[\]|\{\}", m[2]):
            origin, args = typing.get_origin(tp), typing.get_args(tp)
            assert origin is (tuple if container == "[]" else dict), f"{path}: {segment} is not a {container}"
            tp = _unwrap(args[0] if origin is tuple else args[1])
    return tp


def test_result_md_documents_every_field_of_every_record_and_no_other():
    blocks = [b for b in documented_blocks(RESULT_MD.read_text(encoding="utf-8")) if b[0] != "compare.json"]
    records = _records()
    documented: dict[str, set[str]] = {}
    for path, record, keys in blocks:
        assert record in records, f"{path}: result.py has no record {record}"
        assert resolve(path) is records[record], f"{path} does not lead to {record}"
        assert keys, f"{path} ({record}): no keys listed"
        documented.setdefault(record, set()).update(keys)
    problems = []
    for name, cls in records.items():
        keys = {_json_key(f) for f in dataclasses.fields(cls)}
        if missing := keys - documented.get(name, set()):
            problems.append(f"{name}: not documented: {sorted(missing)}")
        if gone := documented.get(name, set()) - keys:
            problems.append(f"{name}: documented but not a field: {sorted(gone)}")
    assert not problems, "docs/result-json.md is out of date:\n" + "\n".join(problems)


def test_result_md_names_every_value_of_the_result_enums():
    text = RESULT_MD.read_text(encoding="utf-8")
    enums = [cls for cls in vars(result_module).values()
             if isinstance(cls, type) and issubclass(cls, enum.Enum) and cls.__module__ == result_module.__name__]
    assert enums
    missing = [f"{cls.__name__}.{v.name}" for cls in enums for v in cls if f"`{v.value}`" not in text]
    assert not missing


def test_result_md_code_tables_are_what_gen_codes_writes():
    page = RESULT_MD.read_text(encoding="utf-8")
    assert page == GEN_CODES.render(page), "docs/result-json.md's code tables are stale: run python docs/gen_codes.py"


def test_gen_codes_reads_every_code_with_its_facts():
    from kernelscope.result import EvidenceRule, WhyNotReason

    for enum_cls in (EvidenceRule, WhyNotReason):
        rows = GEN_CODES.codes(enum_cls.__name__)
        assert [value for _, value, _ in rows] == [m.value for m in enum_cls]
        assert all(text and section for section, _, text in rows)
    picked = {value: text for _, value, text in GEN_CODES.codes("WhyNotReason")}["autotune-picked"]
    assert picked.endswith("by ``margin`` = template / winner - 1)")  # the continuation line is joined


def test_gen_codes_lists_every_note_code_with_the_args_its_words_read():
    from kernelscope.report.words import WORDS

    rows = {code: (section, args, words) for section, code, args, words in GEN_CODES.note_codes()}
    assert list(rows) == list(WORDS)  # every code report/words.py has words for, in its order
    assert all(section and args and words for section, args, words in rows.values())
    # read through the helpers args is handed to; a key read with .get or only inside a branch may be absent
    assert rows["use-mode"][1] == "[speedup], mode, [median_ms]"
    assert rows["busy-machine"][1] == "busiest, cpu_count, processes, of, threads"
    assert rows["did-not-run-status"][1] == "[status], [error_kind]"
    assert rows["differs-but-passes-rule"][1] == "rule, the args of the note it names"
    assert rows["no-latency"][1] == "(none)"
    assert rows["busy-machine"][0] == "`TIMING` (a mode's timing)"
    assert rows["slowest-rank"][0].startswith("`TIMING` (a mode's timing): a mode run under torchrun")
    assert rows["use-mode"][2] == "use mode {mode} instead (it works here: {median_ms}[, {speedup} than eager])"
    # words words.py imports from report/evidence_words.py are read there, with that module's helpers
    assert rows["autotune-marginal"][1] == "winner_backend, margin, runner_up_backend, runner_up"
    assert rows["fusion-benchmark-marginal"][1].startswith("buffers, [fused], [factor], [text], log_line")
    # `a["text"] if "text" in a else ...`: an older file's sentence in place of today's args, which the words show
    assert rows["latency-outliers"][1:] == ("[text], [outlier]", "latency outliers: {outlier}")
    # a comment over two lines opens its section whole
    assert rows["compile-may-differ"][0].endswith("inside its noise (\"why\": its note; a /3 result's sentence)")


def _note_args() -> Iterator[tuple[str, str, set[str]]]:
    """(where, code, keys) of every ``Note("code", {"key": ...})`` the package makes with literal keys."""
    for path in sorted((ROOT / "kernelscope").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Note"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                given = node.args[1] if len(node.args) > 1 else ast.Dict(keys=[], values=[])
                if isinstance(given, ast.Dict) and all(isinstance(k, ast.Constant) for k in given.keys):
                    keys = {str(k.value) for k in given.keys if isinstance(k, ast.Constant)}
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", str(node.args[0].value), keys


def test_the_note_table_names_the_args_the_code_gives():
    # GIVEN every Note the package makes with literal args THEN the table lists each arg it gives, and each arg
    # the table says is always given is given
    table = {code: args for _, code, args, _ in GEN_CODES.note_codes()}
    made = list(_note_args())
    assert len(made) > 40
    wrong = []
    for where, code, keys in made:
        listed = [] if table[code] == "(none)" else table[code].split(", ")
        optional = {a.strip("[]") for a in listed}
        if keys - optional or {a for a in listed if not a.startswith("[")} - keys:
            wrong.append(f"{where}: {code} gives {sorted(keys)}, the table says {table[code]}")
    assert not wrong


def test_gen_codes_reads_args_as_the_words_use_them():
    source = ("def _both(a: Args) -> str:\n    return f\"{a['x']} and {a.get('y')}\"\n\n"
              "def _z(a: Args) -> str:\n    if a.get('flag'):\n        return f\"{a['z']}\"\n    return 'no z'\n\n"
              "# ---- a banner\nT: dict[str, Any] = {\n    'both': _both,\n    # a comment opens a section\n"
              "    'z': _z,\n    'w': lambda a: 'w' + (f\" {a['w']}\" if a.get('w') else ''),\n}\n"
              "WORDS = {'text': lambda a: str(a.get('text', '')), **T}\n")
    words = GEN_CODES._Words(source)
    tables = dict(words.tables())
    assert list(tables) == ["WORDS", "T"]
    read = {k.value: words.reads(*words.function(v)) for k, v in zip(tables["T"].keys, tables["T"].values)}
    assert read == {"both": [("x", True), ("y", False)], "z": [("flag", False), ("z", False)], "w": [("w", False)]}
    assert words.sentence(tables["T"].values[2]) == "w[ {w}]"
    assert words.banner(tables["T"].keys[0].lineno) == "a banner"


def test_resolve_follows_lists_objects_and_optional_records():
    assert resolve("modes[].numerics.outputs[].vs_reference") is result_module.OutputError
    assert resolve("environment.gemm_backends{}") is result_module.BackendStatus
    with pytest.raises(AssertionError, match="has no key"):
        resolve("modes[].no_such_key")


# ------------------------------------------------------------------------------------------------ compare.json keys
def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path in a JSON value: ``modes[].gemms[].before.verdict``; lists of plain values end a path."""
    paths: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            paths.add(path)
            paths |= key_paths(inner, path)
    elif isinstance(value, list):
        for inner in value:
            if isinstance(inner, (dict, list)):
                paths |= key_paths(inner, prefix + "[]")
    return paths


def _compare_keys(kind: str) -> tuple[set[str], set[str]]:
    """(documented key paths, the rows that say they need --nproc) of the compare.json table of ``kind``."""
    block = next(b for b in documented_blocks(RESULT_MD.read_text(encoding="utf-8"))
                 if b[0] == "compare.json" and b[1] == kind)
    text = RESULT_MD.read_text(encoding="utf-8")
    nproc = {k for k in block[2] if re.search(rf"^\| `{re.escape(k)}` \|[^\n]*--nproc", text, re.M)}
    return set(block[2]), nproc


def _below(path: str, parent: str) -> bool:
    return path.startswith(parent + ".") or path.startswith(parent + "[]")


def _covered(path: str, documented: set[str]) -> bool:
    """Documented, or below a documented key whose keys are not listed one by one (``modes[].gemms`` covers
    ``modes[].gemms[].key``; ``modes``, whose keys have rows of their own, covers none)."""
    return path in documented or any(_below(path, d) and not any(_below(e, d) for e in documented)
                                     for d in documented)


@pytest.mark.parametrize("kind", ["compare", "upgrade"])
def test_result_md_lists_every_key_compare_json_is_written_with(kind, tmp_path):
    import json

    if kind == "compare":
        with pytest.raises(SystemExit) as exit_:
            main(["compare", str(UPGRADE_RUN / "before"), str(UPGRADE_RUN / "after"), "--out", str(tmp_path)])
        assert exit_.value.code == 0
        data = json.loads((tmp_path / "compare.json").read_text(encoding="utf-8"))
    else:
        from kernelscope.analysis.upgrade import compare_upgrade
        from kernelscope.report.upgrade import upgrade_data
        from kernelscope.result_file import load_result

        data = upgrade_data(compare_upgrade(load_result(UPGRADE_RUN / "before"), load_result(UPGRADE_RUN / "after")))
    written = key_paths(data)
    documented, nproc = _compare_keys(kind)
    missing = sorted(p for p in written if not _covered(p, documented))
    assert not missing, f"compare.json keys missing from docs/result-json.md: {missing}"
    unwritten = [d for d in documented - nproc if not any(p == d or _below(p, d) for p in written)]
    assert not unwritten, f"documented but not written: {unwritten}"
