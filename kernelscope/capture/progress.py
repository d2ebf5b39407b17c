"""The worker's progress lines: ``@@progress <text>`` on stdout, which the runner relays as the mode's stage.

Its own module because every stage reports (setup, the compile's autotune announcements, the run); a torchrun rank
other than 0 is quiet (``quiet(True)``, set by worker.main), so only rank 0 reports.
"""

from __future__ import annotations

_QUIET = False  # a torchrun rank other than 0: only rank 0 reports progress


def progress(text: str) -> None:
    if not _QUIET:
        print(f"@@progress {text}", flush=True)


def quiet(on: bool) -> None:
    """Silence (or not) this process's progress lines: a torchrun rank other than 0."""
    global _QUIET
    _QUIET = on
