"""One error hierarchy. Each error says what failed, why, and what to do; cli.py turns it into one line."""

from __future__ import annotations


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
