"""Atomic writes and reading a result directory back."""

from __future__ import annotations

import json
import os

import pytest

from kernelscope.errors import ResultError
from kernelscope.files import atomic_write_bytes, atomic_write_text
from kernelscope.report.io import load_result
from kernelscope.result import to_json
from tests.conftest_reports import seed_h200_211


def test_atomic_write_replaces_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "report.html"
    atomic_write_text(target, "old")
    atomic_write_text(target, "néw")
    assert target.read_text(encoding="utf-8") == "néw"
    assert os.listdir(tmp_path) == ["report.html"]
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)  # readable like any file the user writes


def test_failed_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "summary.md"
    atomic_write_text(target, "old")
    # the write itself fails (after the temporary file exists): the temporary file goes, the old file stays
    with pytest.raises(TypeError):
        atomic_write_bytes(target, 12345)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["summary.md"]


def test_load_result_round_trips(tmp_path):
    result = seed_h200_211()
    (tmp_path / "result.json").write_text(json.dumps(to_json(result)))
    assert load_result(tmp_path) == result
    assert load_result(tmp_path / "result.json") == result


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("{not json", "cannot read"),
        ('{"schema": "other/1"}', "is not a kernelscope result"),
        ('{"schema": "kernelscope.result/99"}', "has schema"),
        ('{"schema": "kernelscope.result/1", "modes": 5}', "does not match schema"),
    ],
)
def test_load_result_errors_are_usage_errors(tmp_path, content, message):
    if content is not None:
        (tmp_path / "result.json").write_text(content)
    with pytest.raises(ResultError, match=message) as info:
        load_result(tmp_path)
    assert info.value.exit_code == 2
