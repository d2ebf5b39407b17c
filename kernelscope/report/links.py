"""Links from a report to the files of its result directory (traces, output code).

A result.json may come from anyone, so a path in it becomes an href only when it is a plain relative path: the
views (ranks.py) and the HTML renderer (html.py) both ask ``relative_href``.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def relative_href(path: str | None) -> str | None:
    """A result's relative file path as an href, or None when it is not a plain relative path.

    "javascript:..." or "https://..." must not become a link (the CSP does not stop navigation), nor may "//host/x"
    (protocol-relative) or an absolute path.
    """
    if not path or _SCHEME.match(path) or path.startswith(("/", "\\")) or "\\" in path:
        return None
    parts = PurePosixPath(path).parts
    return "/".join(parts) if parts else None
