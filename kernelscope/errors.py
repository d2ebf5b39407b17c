"""One error hierarchy. Each error says what failed, why, and what to do; cli.py turns it into one line."""

from __future__ import annotations

import signal


class KernelscopeError(Exception):
    """Base class. ``exit_code`` 2 is a usage error (bad input), 1 a run failure."""

    exit_code = 1

    def __init__(self, what: str, fix: str | None = None):
        self.what = what
        self.fix = fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        # One line: newlines from nested causes would break the "one-line error" promise.
        text = self.what if not self.fix else f"{self.what}; {self.fix}"
        return " ".join(text.split())

    @property
    def line(self) -> str:
        """What cli.py prints for it."""
        return f"kernelscope: error: {self.message}"


class UsageError(KernelscopeError):
    """The user asked for something impossible or malformed (exit code 2)."""

    exit_code = 2


class ModelFileError(UsageError):
    """model.py is missing, broken, or does not follow the model-file protocol."""


class TraceError(UsageError):
    """A trace file cannot be read or does not have the shape of a torch.profiler chrome trace."""


class CodeFileError(UsageError):
    """An Inductor output-code file cannot be read."""


class OutputDirError(UsageError):
    """The output directory cannot be used (not writable, or holds someone else's files)."""


class ResultError(UsageError):
    """A result directory or result.json cannot be read."""


class CaptureFileError(UsageError):
    """A capture.json cannot be read: missing, not JSON, another schema, or a field of the wrong type."""


class CaptureError(KernelscopeError):
    """Running the model failed in a way that leaves no result at all."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived (capture/signals.py raises it where the run stands). A KeyboardInterrupt, so no
    ``except Exception`` swallows it and the places that keep a run's finished modes on Ctrl-C see it too."""

    def __init__(self, signum: int = signal.SIGINT):
        self.signum = int(signum)
        super().__init__(self.name)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # what a shell reports for a process the signal ended: 130, 143


class Stopped(KernelscopeError):
    """A signal stopped the run after what had finished was written: exit 130 (SIGINT) or 143 (SIGTERM). The
    message says what was kept; its line reads ``kernelscope: interrupted (SIGTERM) ...``, not as an error."""

    def __init__(self, signal_name: str, what: str):
        super().__init__(what)
        self.exit_code = 128 + int(signal.Signals[signal_name])

    @property
    def line(self) -> str:
        return f"kernelscope: {self.message}"
