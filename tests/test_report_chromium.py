"""A real headless Chromium opens report.html and compare.html: the CSP lets our own style and script run and
nothing else, hostile names stay text in the live DOM, and the page renders to a PNG.

Skips without Debian's chromium (``apt-get install -y chromium``). Set KERNELSCOPE_SCREENSHOT_DIR to keep the
PNGs (CI can attach them; a person should look at them after changing a template).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kernelscope.analysis.compare import compare_results
from kernelscope.report.compare import render_compare_html
from kernelscope.report.html import render_html
from tests.conftest_reports import seed_h200_211, seed_h200_2141, with_hostile_names

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (apt-get install -y chromium)"),
]
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def chromium(page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0",
         *args, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )


def event_handler_attributes(html: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []

    class Finder(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.extend((tag, name) for name, _ in attrs if name.lower().startswith("on"))

    Finder().feed(html)
    return found


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def keep(png: Path) -> None:
    folder = os.environ.get("KERNELSCOPE_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(folder) / png.name)


@pytest.mark.parametrize("which", ["report", "report-hostile", "compare"])
def test_renders_in_chromium(tmp_path, which):
    if which == "compare":
        html = render_compare_html(compare_results(seed_h200_211(), seed_h200_2141(), "torch-2.11", "torch-2.14.1"))
    elif which == "report-hostile":
        html = render_html(with_hostile_names(seed_h200_2141()))
    else:
        html = render_html(seed_h200_211())
    page = tmp_path / f"{which}.html"
    page.write_text(html, encoding="utf-8")

    dom = chromium(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    # the CSP blocked nothing of ours (a wrong hash is logged as a violation and the style/script do not apply)
    assert "Content Security Policy" not in dom.stderr
    if which.startswith("report"):
        # our script ran: it un-hides the download button
        assert '<button id="download" type="button">' in dom.stdout
    # the live DOM has no element a name could have injected
    assert "<img" not in dom.stdout
    assert not [a for a in event_handler_attributes(dom.stdout)], "an on* attribute reached the DOM"

    png = tmp_path / f"{which}.png"
    shot = chromium(page, tmp_path, f"--screenshot={png}", "--window-size=1400,2400")
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert png_size(png) == (1400, 2400)
    # a blank or unstyled page compresses to a few KB; the report has tables, badges and charts
    assert png.stat().st_size > 60_000
    keep(png)


@pytest.fixture(scope="module")
def real_pages():
    from tests.report_pages import pages

    return {name: render_html(r) for name, r in pages().items()}


@pytest.mark.parametrize("width", [1280, 1920])
@pytest.mark.parametrize("name", ["transformer_block", "linear_gelu", "linear_gelu-sweep", "linear_gelu-nvgemm-aten",
                                  "lossy-fp16", "llama-16-layers"])
@pytest.mark.slow
def test_real_reports_fit_the_window(tmp_path, real_pages, name, width):
    """The committed H200 runs, the 4-GEMM transformer block and a 16-layer Llama (GEMMs in groups, each group's
    GEMMs in a nested table): at 1280 px (a laptop) and 1920 px nothing is wider than the window, with every
    expandable row open as well as closed (1280 px was 1582-1695 px wide)."""
    from tests import browser

    html = real_pages[name]
    for open_details in (False, True):
        m = browser.measure(html, tmp_path, width, open_details=open_details)
        assert m["window"] == width
        assert m["scroll"] <= width and not m["wide"], (open_details, m)
    page = tmp_path / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    png = tmp_path / f"{name}-{width}.png"
    shot = browser.screenshot(page, png, tmp_path / "profile", width, 2400)
    assert shot.returncode == 0 and png_size(png) == (width, 2400)
    keep(png)


def test_real_report_short_names_with_the_full_name_on_hover(real_pages):
    page = real_pages["transformer_block"]
    assert 'title="void at::native::vectorized_elementwise_kernel&lt;8, at::native::CUDAFunctor_add' in page
    assert "<code>vectorized_elementwise_kernel&lt;CUDAFunctor_add&gt;</code>" not in page  # cut: in a summary
    assert "vectorized_elementwise_kernel&lt;CUDAFunctor_add&gt;</code></summary>" in page
    assert "e+03 GB/s" not in page and "TB/s" in page
