"""What a mode reads where no worker finished it: not run after a signal or a fatal error, or still to run when
result.json is written during the run; and the signal that stopped the run."""

from __future__ import annotations

from kernelscope.capture.signals import received
from kernelscope.result import ModeResult


def stop_signal() -> str:
    """The signal that stopped the run: the first one inside signals.handling(), else Python's own Ctrl-C."""
    return received() or "SIGINT"


def skipped(mode: str, fatal: tuple[str, str] | None, interrupted: str | None) -> ModeResult:
    """The result of a mode that was not run, after SIGINT/SIGTERM or a fatal error of an earlier one."""
    if interrupted:
        return ModeResult(name=mode, status="interrupted", error=f"interrupted ({interrupted}) before it ran",
                          error_kind="interrupted")
    return ModeResult(name=mode, status="failed", error=f"not run: {fatal[1]}",  # type: ignore[index]
                      error_kind="skipped")


def pending(mode: str) -> ModeResult:
    """A mode still to run when result.json is written during the run: what it is if the run dies now."""
    return ModeResult(name=mode, status="interrupted", error_kind="interrupted",
                      error="not finished when result.json was written: the run stopped before it finished")
