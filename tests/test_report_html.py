"""report.html: one self-contained file, escaped, no remote loads, every section present."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
from html.parser import HTMLParser

import jinja2
import pytest

from kernelscope.analysis.facts import with_facts
from kernelscope.report.html import environment, render_html, unpack_result
from kernelscope.report.links import relative_href
from kernelscope.result import SCHEMA, ModeResult, RunEnvironment, RunResult, run_from_json, to_json
from tests.conftest_reports import (
    DATA,
    HOSTILE_NAMES,
    ZERO_X,
    big_h200_211,
    huge_result,
    said,
    seed_h200_211,
    seed_h200_2141,
    with_hostile_names,
)

SECTIONS = ("header", "glance", "environment", "modes", "charts", "gemms", "kernels", "failures", "traces",
            "tolerances")


class Page(HTMLParser):
    """Every element with its attributes, the text of each <script>/<style>, and the text nodes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self.text: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag in self.raw:
            self._in = tag
            self.raw[tag].append("")

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in:
            self.raw[self._in][-1] += data
        else:
            self.text.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == name]


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    p.close()
    return p


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@pytest.fixture(scope="module")
def seed_html() -> str:
    return render_html(seed_h200_211())


def test_required_sections_present(seed_html):
    ids = {a.get("id") for _, a in parse(seed_html).elements}
    for section in SECTIONS:
        assert section in ids, section
    assert "tensorboard --logdir tb" in seed_html
    assert "Perfetto" in seed_html
    assert "unmaintained upstream" in seed_html


def test_one_file_with_a_csp_that_forbids_remote_loads(seed_html):
    page = parse(seed_html)
    metas = [a for a in page.tags("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    assert len(metas) == 1
    csp = metas[0]["content"]
    assert "default-src 'none'" in csp
    # the CSP comes before any style or script, so it governs them
    first = [t for t, _ in page.elements].index
    assert first("meta") < first("style") < first("script")
    # only our own inline style and script run, pinned by hash; the JSON data script is not executable
    (style,) = page.raw["style"]
    scripts = page.tags("script")
    assert sorted(str(s.get("type")) for s in scripts) == ["None", "application/json"]
    code = page.raw["script"][[s.get("type") for s in scripts].index(None)]
    assert f"style-src {_sha(style)}" in csp
    assert f"script-src {_sha(code)}" in csp
    assert "unsafe-inline" not in csp
    # nothing to load from anywhere: no src at all, no stylesheet links, hrefs are fragments or relative paths
    for tag, attrs in page.elements:
        assert "src" not in attrs, tag
        assert not (tag == "link" and attrs.get("rel") == "stylesheet")
        for key in ("href", "xlink:href", "action", "formaction"):
            value = attrs.get(key)
            if value is not None:
                assert not re.match(r"^\s*([a-z][a-z0-9+.-]*:|//)", value, re.IGNORECASE), (tag, key, value)
    assert not re.search(r"(src|href)\s*=\s*[\"']?\s*https?:", seed_html, re.IGNORECASE)


def test_hostile_kernel_names_come_out_as_text():
    result = with_hostile_names(seed_h200_2141())
    html = render_html(result)
    page = parse(html)
    # no element was injected: the only img/script tags are none and our two scripts
    assert page.tags("img") == []
    assert len(page.tags("script")) == 2
    assert "<img src=x" not in html
    assert "</script><img" not in html
    # the names are visible, as text, exactly
    text = "".join(page.text)
    for name in HOSTILE_NAMES:
        assert name in text
    # the JSON data script holds the result gzip-compressed in base64 (no "<" at all): "</script>" cannot close it
    data = page.raw["script"][[s.get("type") for s in page.tags("script")].index("application/json")]
    assert "</" not in data and "<img" not in data
    unpacked = unpack_result(json.loads(data))
    assert run_from_json(unpacked) == run_from_json(to_json(result))  # (string evidence comes back typed)


def test_trace_links_are_relative_and_javascript_urls_are_not_links():
    base = seed_h200_211()
    evil = dataclasses.replace(base.modes[1], trace="javascript:alert(1)", log="https://example.com/x",
                               inductor_code=("//example.com/code.py", "/etc/passwd"))
    html = render_html(dataclasses.replace(base, modes=(base.modes[0], evil)))
    hrefs = [a["href"] for a in parse(html).tags("a")]
    assert "tb/eager/h200.1.pt.trace.json.gz" in hrefs
    assert not any("javascript" in h or "example.com" in h or h.startswith("/") for h in hrefs)
    assert "javascript:alert(1)" in html  # still shown, as text
    assert relative_href("tb/default/x.pt.trace.json.gz") == "tb/default/x.pt.trace.json.gz"
    for bad in ("javascript:x", "JAVASCRIPT:x", "data:text/html,x", "//h/x", "/abs", "\\\\h\\x", "c:\\x"):
        assert relative_href(bad) is None, bad


def test_mode_table_shows_what_a_reviewer_needs(seed_html):
    text = " ".join("".join(parse(seed_html).text).split())
    assert "2.52× slower" in text and "0.398" not in text  # default vs eager, read one way
    assert "slower" in text and "95% CI" in text
    assert "3.59 s" in text  # default first call
    assert "32.4 MiB" in text
    assert "pass" in text and "abs 0.00146" in text
    assert "GEMMs 1: partial 1" in text
    assert "triton_tem_fused_addmm_t_0" in text
    # GEMM evidence is there, collapsed in <details>
    assert "Graph fragment: %gelu = gelu(%addmm)" in text
    assert len(parse(seed_html).tags("details")) >= 4


def test_failed_mode_with_error_and_fallback():
    html = render_html(big_h200_211(autotune_failed=True))
    text = " ".join("".join(parse(html).text).split())
    assert "NoValidChoicesError" in text
    assert "What to do: no GEMM choice of the requested backends compiled" in text
    assert "use mode default instead" in text


def test_renders_with_nothing_optional():
    # StrictUndefined: a template that reached for a missing field would raise here
    bare = with_facts(RunResult(schema=SCHEMA, tool_version="0", created="", command="", model="m.py", device="cpu",
                                dtype="", environment=RunEnvironment(),
                                modes=(ModeResult(name="eager", status="failed", error="boom"),)))
    html = render_html(bare)
    assert "boom" in html
    assert "No GEMM found in any mode." in html
    empty = dataclasses.replace(bare, modes=())
    assert "No mode produced data to chart." in render_html(empty)


def test_environment_is_strict_and_autoescaping():
    env = environment()
    assert env.autoescape is True
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_huge_model_report_stays_a_reasonable_file(monkeypatch):
    from kernelscope.report import html as html_module

    # 4 modes x 3000 distinct kernels with long templated names, 400 GEMMs each
    html = render_html(huge_result())
    page = parse(html)
    assert len(html) < 5_000_000
    # the kernel tables show the top 40 per mode and say how many more there are
    assert "2960 more kernels" in html
    # the result travels compressed (a download button), and past EMBED_LIMIT not at all: the report then says
    # where the data is
    assert [s.get("type") for s in page.tags("script")] == ["application/json", None]
    monkeypatch.setattr(html_module, "EMBED_LIMIT", 1000)
    html = render_html(huge_result())
    assert [s.get("type") for s in parse(html).tags("script")] == [None]
    assert "use the result.json beside this report" in html


def _with_engine_fields():
    """The fields the rebuilt GEMM engine fills (module path, groups of identical layers, op costs, typed
    evidence with where it was read, the per-mode epilogue cost), on the real seed result: its GEMM in two
    identical layers, grouped by analysis."""
    from kernelscope.analysis.gemm.summary import group_gemms
    from kernelscope.result import EpilogueCost, OpCost

    r = seed_h200_211()
    m = r.modes[1]
    g = dataclasses.replace(
        m.gemms[0], module="layers.0.mlp.up_proj", source="model.py:42",
        costs=(OpCost("gelu", ("triton_poi_fused_gelu_0",), 3.2, 131072),),
        evidence=(said("buf1 = extern_kernels.addmm(...)", "code", "graph_0.py:88"), said("x", "rule")))
    twin = dataclasses.replace(g, id=f"{g.id}-1", module="layers.1.mlp.up_proj",
                               evidence=(said("buf7 = extern_kernels.addmm(...)", "code", "graph_0.py:95"),
                                         said("x", "rule")))
    gemms, groups = group_gemms((g, twin))
    cost = EpilogueCost(57.6, 18.0, 9, 24, None)
    return dataclasses.replace(r, modes=(r.modes[0], dataclasses.replace(m, gemms=gemms, gemm_groups=groups,
                                                                         epilogue_cost=cost), *r.modes[2:]))


def test_engine_fields_render_where_present_and_hide_when_empty():
    from kernelscope.report.markdown import render_markdown

    html = render_html(_with_engine_fields())
    text = " ".join("".join(parse(html).text).split())
    assert "unfused epilogues: 18% of GPU time, 9 of 24 kernels" in text
    # one row for the group, each GEMM of it in the collapsed list below
    assert "2 GEMMsaddmm · float16 layers.0-1.mlp.up_proj" in text
    assert "<th>Module</th>" in html and "layers.0.mlp.up_proj" in text and "layers.1.mlp.up_proj" in text
    assert "gelu: 3.20 µs per iteration, 128 KiB through memory in triton_poi_fused_gelu_0" in text
    assert "buf1 = extern_kernels.addmm(...) at graph_0.py:88" in text and "model.py:42" in text
    assert "buf7 = extern_kernels.addmm(...) at graph_0.py:95" in text
    assert "Evidence every one of them hasrule x" in text  # said once for the group
    md = render_markdown(_with_engine_fields())
    assert "_unfused epilogues: 18% of GPU time, 9 of 24 kernels_" in md
    assert "- `addmm` `layers.0-1.mlp.up_proj` ×2, 16 × 4096 × 4096 on cuBLASLt: **partial**" in md
    plain = render_html(seed_h200_211())
    assert "<th>Module</th>" not in plain and "unfused epilogues:" not in plain


def test_speedup_badge_hover_reads_one_way_on_a_real_run():
    # GIVEN the committed H200 runs: linear_gelu (torch 2.11, every compiled mode slower than eager) and its sweep
    from kernelscope.report.io import load_result
    from kernelscope.report.markdown import render_markdown

    result = load_result(DATA / "h200-torch2.11-kernelscope-run" / "linear_gelu")
    html = render_html(result)
    # THEN the badge's hover says it one way, never "eager median / mode median = 0.449×"
    assert 'title="median 120 µs vs eager\'s 53.8 µs: 2.23× slower than eager"' in html
    # and no page shows a ratio below 1 as a factor (sweep chart ticks, dynamic-vs-static hover included)
    sweep = load_result(DATA / "h200-torch2.11-kernelscope-run" / "linear_gelu-sweep")
    for text in (html, render_markdown(result), render_html(sweep), render_markdown(sweep)):
        assert not ZERO_X.findall(text)


def test_coverage_and_its_warning_render_as_text():
    from tests.conftest_reports import HOSTILE, seed_h200_211, with_coverage

    html = render_html(with_coverage(seed_h200_211()))
    page = parse(html)
    text = " ".join(" ".join(page.text).split())
    assert "Coverage: 1 of 2 GEMM-class ops attributed to a kernel" in text
    assert f"not attributed: {HOSTILE} stem.proj 1568 × 768 × 768 (model.py:12)" in text
    assert "Warning: GEMM count vs eager: 3 GEMM-class ops against eager's 2" in text
    assert "<img src=x" not in html and page.tags("img") == []
