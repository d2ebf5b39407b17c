"""Headless Chromium for the report tests: screenshots, and the page's laid-out width at a window width.

The width is read by a measuring copy of the page: the report's CSP admits only its own script (by hash), so
the copy swaps the CSP for one that also admits the measuring script's hash. Nothing else in the page changes.
"""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")

# After layout: the document's scroll width, the window's width, and every element wider than the window
# (tag#id.class, its right edge) so a failing test says what overflowed.
MEASURE = (
    "window.addEventListener('load',function(){var w=window.innerWidth,bad=[];OPEN"
    "document.querySelectorAll('body *').forEach(function(e){var r=e.getBoundingClientRect();"
    "if(r.right>w+1&&bad.length<8){bad.push(e.tagName.toLowerCase()+(e.id?'#'+e.id:'')+"
    "(e.className&&e.className.baseVal===undefined?'.'+e.className:'')+':'+Math.round(r.right));}});"
    "var o=document.createElement('pre');o.id='ks-measure';"
    "o.textContent=JSON.stringify({scroll:document.documentElement.scrollWidth,window:w,wide:bad});"
    "document.body.appendChild(o);});"
)


def run(page: Path, profile: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=timeout, check=False,
    )


def screenshot(page: Path, png: Path, profile: Path, width: int,
               height: int = 3000) -> subprocess.CompletedProcess[str]:
    return run(page, profile, f"--screenshot={png}", f"--window-size={width},{height}", "--hide-scrollbars")


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def measure(html: str, work: Path, width: int, *, open_details: bool = False) -> dict:
    """{"scroll": page width in px, "window": width, "wide": [elements past the right edge]} at ``width``;
    ``open_details``: with every <details> (expanded rows, evidence) open, as a reader who clicks them all."""
    import json

    script = MEASURE.replace("OPEN", "document.querySelectorAll('details').forEach(function(d){d.open=true;});"
                             if open_details else "")
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    assert csp, "the report has no CSP meta"
    policy = csp.group(1).replace("script-src ", f"script-src {_sha(script)} ", 1)
    page_html = html.replace(csp.group(0), f'<meta http-equiv="Content-Security-Policy" content="{policy}">', 1)
    page_html = page_html.replace("</body>", f"<script>{script}</script></body>", 1)
    page = work / f"measure-{width}{'-open' if open_details else ''}.html"
    page.write_text(page_html, encoding="utf-8")
    out = run(page, work / "profile", "--dump-dom", f"--window-size={width},1000")
    m = re.search(r'<pre id="ks-measure">(.*?)</pre>', out.stdout, re.S)
    assert m, out.stderr[-2000:]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
