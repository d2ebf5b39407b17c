"""What a run reads and checks before any worker starts: the model file's constants against --set and --sweep,
the roofline's calibration, and the points of the model file's get_input_sweep()."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernelscope import modelfile
from kernelscope.analysis.roofline import default_calibration_path, read_calibration
from kernelscope.capture.runner import CaptureOptions, list_input_points
from kernelscope.errors import UsageError
from kernelscope.sweep_plan import defines_input_sweep, describe_hook_entry, parse_sweeps


def read_model(model: Path, sets: tuple[str, ...], sweeps: tuple[str, ...]) -> tuple[modelfile.ModelSpec,
                                                                                     dict[str, Any],
                                                                                     dict[str, list[Any]]]:
    """The model file's spec, the --set values and the --sweep axes, checked against its constants."""
    spec = modelfile.inspect_model_file(model)
    parsed_sets = modelfile.parse_sets(sets)
    modelfile.check_sets(spec, parsed_sets)
    parsed_sweeps = parse_sweeps(sweeps)
    unknown = [n for n in parsed_sweeps if n not in spec.constants]
    if unknown:
        known = ", ".join(c for c in spec.constants if not c.startswith("_")) or "none"
        raise UsageError(f"--sweep {unknown[0]}: {model.name} has no module-level constant {unknown[0]!r}",
                         f"use one of: {known}")
    both = [n for n in parsed_sweeps if n in parsed_sets]
    if both:
        raise UsageError(f"{both[0]} is given to both --set and --sweep", "keep it in --sweep only")
    return spec, parsed_sets, parsed_sweeps


def load_calibration(path: Path | None) -> tuple[Path, Any]:
    """The calibration file's path and its ceilings (required when --calibration names it)."""
    cal_path = path or default_calibration_path()
    return cal_path, read_calibration(cal_path, required=path is not None)


def input_points(err: Any, model_path: str, opts: CaptureOptions, out_dir: Path) -> list[dict[str, Any]] | None:
    """The model file's get_input_sweep() points, asked of a worker; None when it defines none."""
    if not defines_input_sweep(model_path):
        return None
    err.print("reading get_input_sweep() from the model file")
    return [describe_hook_entry(p["kind"], i, p["detail"])
            for i, p in enumerate(list_input_points(opts, out_dir / "modes"))]
