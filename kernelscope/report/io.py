"""Reading a result directory back: kernelscope/result_file.py does it (the one module that writes and reads
result.json); its names are here too for the callers that import them from the report package."""

from __future__ import annotations

from kernelscope.result_file import RESULT_FILE, load_result, result_path

__all__ = ["RESULT_FILE", "load_result", "result_path"]
