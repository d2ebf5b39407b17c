"""kernelscope calibrate: measure this device's matmul and copy ceilings for the roofline of later runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click

from kernelscope.errors import CaptureError, UsageError


@click.command("calibrate")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto", show_default=True,
              help="auto = cuda when available.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Calibration file to update [default: $KERNELSCOPE_CALIBRATION or "
                   "~/.cache/kernelscope/calibration.json]; other devices' entries are kept.")
@click.option("--size", type=click.IntRange(min=16), default=None,
              help="Square GEMM size N (N x N x N) [default: 8192 on CUDA, 1024 on CPU].")
@click.option("--dtypes", default=None, metavar="LIST",
              help="Matmul dtypes [default: bfloat16,float16,float32 on CUDA; float32 on CPU].")
@click.option("--copy-mb", type=click.IntRange(min=1), default=None,
              help="Bytes copied per device-to-device copy, in MiB [default: 1024 on CUDA, 256 on CPU].")
@click.option("--repeats", type=click.IntRange(min=3), default=10, show_default=True, help="Timed samples each.")
@click.option("--timeout", type=click.FloatRange(min=1), default=600.0, show_default=True, help="Seconds.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(device: str, out: Path | None, size: int | None, dtypes: str | None, copy_mb: int | None, repeats: int,
            timeout: float, debug: bool) -> None:
    """Measure the device's dense matmul TFLOP/s per dtype (square GEMMs on random data) and its copy bandwidth
    (device-to-device copy_, bytes read + written), and store them in a JSON file: later `kernelscope profile`
    runs on the same device report each GEMM's roofline against these measured ceilings too."""
    from kernelscope.analysis.roofline import (
        default_calibration_path,
        device_key,
        known_peaks,
        merge_calibration,
        read_calibration,
    )
    from kernelscope.files import atomic_write_text

    names = [d.strip() for d in dtypes.split(",") if d.strip()] if dtypes else None
    allowed = ("float64", "float32", "float16", "bfloat16")
    if names and any(n not in allowed for n in names):
        bad = next(n for n in names if n not in allowed)
        raise UsageError(f"--dtypes: unknown dtype {bad!r}", f"use a comma-separated list of {', '.join(allowed)}")
    path = out or default_calibration_path()
    existing = read_calibration(path)  # an unreadable file is an error: do not silently drop its entries
    spec = {"device": device, "size": size, "dtypes": names, "repeats": repeats,
            "copy_bytes": copy_mb * (1 << 20) if copy_mb else None}
    click.echo(f"kernelscope calibrate: measuring matmul and copy ceilings ({device}) ...", err=True)
    # The parent never imports torch: the measurement runs in a worker process, like every capture.
    try:
        proc = subprocess.run([sys.executable, "-m", "kernelscope.capture.calibrate", json.dumps(spec)],
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise CaptureError(f"calibration did not finish within --timeout {timeout:g} s",
                           "pass a smaller --size or --copy-mb, or a longer --timeout")
    line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("@@calibration ")), None)
    if line is None:
        err = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        why = err[-1] if err else f"exit code {proc.returncode}"
        if why.startswith("@@error "):
            raise UsageError(why[len("@@error "):])
        raise CaptureError(f"calibration failed: {why[:300]}", "rerun with a smaller --size, or see the error above")
    data = json.loads(line[len("@@calibration "):])
    env, entry = data["environment"], data["entry"]
    key = device_key(env)
    if key is None:
        raise CaptureError("the calibration worker did not say which device it measured", "report this as a bug")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(merge_calibration(existing, key, entry), indent=1) + "\n")
    ds = known_peaks(env.get("gpu")) if env.get("device") == "cuda" else None
    click.echo(f"device: {key}")
    for name, tflops in entry["matmul_tflops"].items():
        vs = ""
        if ds and ds.matmul_tflops.get(name):
            vs = f" ({100 * tflops / ds.matmul_tflops[name]:.0f}% of the datasheet's {ds.matmul_tflops[name]:g})"
        click.echo(f"matmul {name}: {tflops:.4g} TFLOP/s{vs}")
    vs = f" ({100 * entry['copy_gbps'] / ds.bandwidth_gbps:.0f}% of the datasheet's {ds.bandwidth_gbps:g})" if (
        ds and ds.bandwidth_gbps) else ""
    click.echo(f"copy: {entry['copy_gbps']:.4g} GB/s{vs}")
    click.echo(f"written to {path}")
