"""report.html: one self-contained file (CSS, JS, SVG charts inline; a CSP that forbids every remote load).

Templates live in the top-level templates/ folder, shipped as the package ``kernelscope.templates`` and read
through importlib.resources, so a wheel and an editable install find them the same way.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from kernelscope import fmt
from kernelscope.report import charts
from kernelscope.report.context import build_context, kernel_ref
from kernelscope.report.links import relative_href
from kernelscope.report.words import say, say_all
from kernelscope.result import RunResult
from kernelscope.result_file import dumps_result

TEMPLATE_PACKAGE = "kernelscope.templates"
# The result travels inside the report for the download button, gzip-compressed and base64-encoded (a 16-layer
# model's 1.4 MB result.json is ~0.1 MB so; the browser inflates it with DecompressionStream), up to this many
# characters; past it the report points to the result.json beside it.
EMBED_LIMIT = 500_000


# A source checkout (the repository root holds pyproject.toml and templates/) reads its own templates: with the
# package imported through PYTHONPATH, ``kernelscope.templates`` could otherwise resolve to the templates of
# another checkout's editable install.
_ROOT = Path(__file__).resolve().parents[2]
_SOURCE_TEMPLATES = _ROOT / "templates" if (_ROOT / "pyproject.toml").is_file() else None


def read_asset(name: str) -> str:
    if _SOURCE_TEMPLATES is not None and (_SOURCE_TEMPLATES / name).is_file():
        return (_SOURCE_TEMPLATES / name).read_text(encoding="utf-8")
    return resources.files(TEMPLATE_PACKAGE).joinpath(name).read_text(encoding="utf-8")


def _load(name: str) -> str:
    try:
        return read_asset(name)
    except FileNotFoundError:
        raise jinja2.TemplateNotFound(name) from None


_BADGE = {
    "ok": "ok", "failed": "failed", "timeout": "timeout", "unavailable": "unavailable", "interrupted": "interrupted",
    "fused": "fused", "partial": "partial", "unfused": "unfused", "none": "none", "unknown": "unknown",
    "pass": "pass", "fail": "fail", "reference": "reference", "n/a": "na",
    "faster": "faster", "slower": "slower", "within noise": "noise", "baseline": "baseline",
    # a fusion-advice candidate's verdict (result.py AdviceVerdict)
    "not-run": "na", "not-fused": "unfused", "numerics-fail": "fail", "no-latency": "na", "within-noise": "noise",
}


def badge(value: str) -> str:
    """CSS badge class for a status/verdict/call; from a fixed table so data never picks a class name."""
    return _BADGE.get(str(value), "other")


def link(path: str | None) -> Markup:
    if not path:
        return Markup("—")
    href = relative_href(path)
    if href is None:
        return Markup("<code>{}</code>").format(path)
    return Markup('<a href="{}"><code>{}</code></a>').format(href, path)


def share(part: float | None, total: float | None) -> str:
    if part is None or not total:
        return ""
    return f"{100 * part / total:.1f}%"


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between runs, as Python keeps a module's bytecode: compiling report.html.j2 is
    ~0.1 s, more than rendering it. Jinja's own per-user directory (in the temp directory, mode 0700, its owner
    checked); an entry is used only when the template's source checksum and Jinja's bytecode version match.
    A cache that cannot be read or written costs only the compile, never the report."""

    def __init__(self) -> None:
        try:
            super().__init__()
        except (OSError, RuntimeError):  # no safe directory: compile every time
            self.directory = ""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if self.directory:
            try:
                super().load_bytecode(bucket)
            except Exception:  # a damaged entry (pickle, marshal): compile again
                bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if self.directory:
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass


@functools.cache
def environment() -> jinja2.Environment:
    """One per process: it keeps each template compiled (compiling report.html.j2 costs more than rendering it),
    and with the bytecode cache, between processes."""
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_load),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_BytecodeCache(),
    )
    env.filters.update(
        ms=fmt.ms, seconds=fmt.seconds, us=fmt.us, count=fmt.count, nbytes=fmt.nbytes,
        sci=fmt.sci, short=fmt.short, pct=fmt.percent_change, badge=badge, category_class=charts.category_class,
        pct1=fmt.fraction, flops=fmt.flops_rate, bandwidth=fmt.bandwidth, first_call=fmt.first_call,
        kname=fmt.kernel_name, speedup=fmt.speedup, change=fmt.change, change_interval=fmt.change_interval,
        say=say, say_all=say_all,  # what analysis noted (Notes), in words
    )
    env.globals.update(link=link, share=share, shape=fmt.shape, kref=kernel_ref, speedup_interval=fmt.speedup_interval)
    return env


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(css: str, js: str) -> str:
    """Nothing from the network, no plugins, no forms; only our inline style and script, by hash.

    img-src allows data: only, for the browser's own SVG rendering; nothing in the report loads an image.
    """
    return (
        "default-src 'none'; "
        f"style-src {_sha256(css)}; "
        f"script-src {_sha256(js)}; "
        "img-src data:; base-uri 'none'; form-action 'none'; object-src 'none'"
    )


def page_assets() -> dict[str, Any]:
    """CSS, JS and the CSP that pins them, for any page built on _layout.html.j2."""
    css, js = read_asset("report.css"), read_asset("report.js")
    # Markup: our own files go in verbatim (autoescape would turn CSS's ">" into "&gt;"), byte for byte as hashed.
    return {"css": Markup(css), "js": Markup(js), "csp": content_security_policy(css, js)}


def tb_logdir(result: RunResult) -> str:
    """The TensorBoard logdir, relative to the output folder: the first folder of a mode's trace path."""
    for m in result.modes:
        href = relative_href(m.trace)
        if href and "/" in href:
            return href.split("/", 1)[0]
    return "tb"


def pack_result(result: RunResult, text: str | None = None) -> str:
    """result.json's text as result_file writes it (``text``, when the caller has it), gzip-compressed (no
    timestamp: the same result packs to the same text) and base64-encoded."""
    raw = (dumps_result(result) if text is None else text).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def unpack_result(packed: str) -> Any:
    """The JSON data of ``pack_result``'s text (tests read the report's embedded result back with it)."""
    return json.loads(gzip.decompress(base64.b64decode(packed)))


def render_html(result: RunResult, result_text: str | None = None) -> str:
    """The whole report as one HTML string."""
    ctx = build_context(result)
    data = pack_result(result, result_text)
    embed = len(data) <= EMBED_LIMIT
    template = environment().get_template("report.html.j2")
    return template.render(
        ctx=ctx,
        r=result,
        tool_version=result.tool_version,
        tb_logdir=tb_logdir(result),
        result_json=data if embed else None,
        **page_assets(),
    )
