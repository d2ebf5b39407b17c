"""A mode's numerics: its outputs against eager's and against a float64 reference of the same model (float32 where
the model's ops cannot run in float64 and the run is in a lower precision).

The comparison runs on the worker's tensors, so it is capture's (the only layer that holds them); the table it
judges them by is kernelscope/tolerance.py's, a base module imported here at the top, so the capture worker and
analysis/numerics.py (which re-reads the recorded figures without torch) judge by one table and one set of pass
rules. tolerance.py is pure and tiny: importing it costs a timing-only process nothing.

Against the reference each output tensor is judged by torch's own accuracy rule (``torch._dynamo.utils.same`` with
``fp64_ref``, as its benchmark suite calls it), computed with the same torch operations on the same tensors:
``torch.allclose`` in the outputs' dtype, the rmse over every element in float64.
"""

from __future__ import annotations

import math
from typing import Any

from kernelscope.tolerance import (
    RULE_NAME,
    equal_nan_for,
    reference_bound,
    reference_multiplier,
    reference_pass,
    tolerance_for,
)

Named = list[tuple[str, Any]]  # (the tensor's path in the output: "logits", "[0]"; the tensor)


def _snapshot(torch: Any, out: Any) -> Named:
    # CUDA-graph outputs are overwritten by the next replay: keep a copy.
    from kernelscope.modelfile import named_output_tensors  # dataclass / ModelOutput outputs too, not only pytrees

    return [(name, t.detach().clone()) for name, t in named_output_tensors(out)]


def _stats(torch: Any, g: Any, r: Any, tol: Any) -> dict[str, Any]:
    """Sums and counts of ``g`` against ``r`` (one output), in float64 on ``g``'s device (a GPU run's outputs stay
    on the GPU: a 1B Llama's logits are 16M elements, and in float64 on the CPU its checks took over a minute):
    what ``_summary`` reduces."""
    g64, r64 = g.detach().double(), r.detach().to(g.device).double()
    out = {"max_abs": 0.0, "ref_max": 0.0, "sq": 0.0, "ref_sq": 0.0, "n_finite": 0, "n_ref": 0, "nonfinite": 0,
           "new_nonfinite": 0, "mismatch": 0, "differ": 0, "total": int(g64.numel())}
    if not g64.numel():
        return out
    gf, rf = torch.isfinite(g64), torch.isfinite(r64)
    both = gf & rf
    out["nonfinite"] = int((~gf).sum().item())
    out["new_nonfinite"] = int((~gf & rf).sum().item())
    d = torch.where(both, (g64 - r64).abs(), torch.zeros_like(g64))
    out["max_abs"] = float(d.max().item())
    if rf.any():
        out["ref_max"] = float(r64[rf].abs().max().item())
        out["ref_sq"] = float((r64[rf] * r64[rf]).sum().item())
        out["n_ref"] = int(rf.sum().item())
    out["sq"] = float((d * d).sum().item())
    out["n_finite"] = int(both.sum().item())
    outside = d > (tol.atol + tol.rtol * torch.where(both, r64.abs(), torch.zeros_like(r64)))
    # NaN/Inf on one side only, or different non-finite values (inf vs nan, +inf vs -inf), are mismatches.
    same_nonfinite = (~gf & ~rf) & ((g64 == r64) | (torch.isnan(g64) & torch.isnan(r64)))
    one_side = ~both & ~same_nonfinite
    out["mismatch"] = int((outside | one_side).sum().item())
    out["differ"] = int(((d > 0) | one_side).sum().item())
    return out


def _summary(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The errors of a set of outputs from their ``_stats``.

    max_abs; max_rel norm-wise (max |got-ref| / max |ref|: element-wise relative error explodes at zeros); rmse
    over the elements finite on both sides; mismatch_fraction: elements outside ``tol`` as torch.allclose counts
    them (|got-ref| > atol + rtol*|ref|, a NaN/Inf on one side only, or a different NaN/Inf); differ_fraction:
    elements not bit-equal; nonfinite: NaN/Inf in ``got``; new_nonfinite: of those, where ``ref`` is finite."""
    max_abs = max((p["max_abs"] for p in parts), default=0.0)
    ref_max = max((p["ref_max"] for p in parts), default=0.0)
    sq, n_finite = sum(p["sq"] for p in parts), sum(p["n_finite"] for p in parts)
    total, mismatch = sum(p["total"] for p in parts), sum(p["mismatch"] for p in parts)
    out = {"max_abs": max_abs,
           "max_rel": max_abs / ref_max if ref_max > 0 else (0.0 if max_abs == 0 else None),
           "rmse": (sq / n_finite) ** 0.5 if n_finite else 0.0,
           "mismatch_fraction": (mismatch / total) if total else 0.0,
           "differ_fraction": (sum(p["differ"] for p in parts) / total) if total else 0.0,
           "nonfinite": sum(p["nonfinite"] for p in parts), "new_nonfinite": sum(p["new_nonfinite"] for p in parts),
           "elements": total}
    out["allclose"] = mismatch == 0
    return out


def _structure(got: Named, ref: Named) -> str:
    """Why two sets of outputs cannot be compared element by element ("" when they can)."""
    if len(got) != len(ref):
        return f"{len(got)} outputs vs {len(ref)} in the reference"
    for (name, g), (_, r) in zip(got, ref):
        if g.shape != r.shape:
            return f"{name}: shape {tuple(g.shape)} vs {tuple(r.shape)}"
    return ""


def _compare(torch: Any, got: Named, ref: Named, tol: Any) -> dict[str, Any]:
    """Errors of ``got`` against ``ref`` over all outputs (``_summary``), or why they differ in structure."""
    note = _structure(got, ref)
    if note:
        return {"max_abs": None, "max_rel": None, "note": note, "pass": False, "allclose": False}
    return _summary([_stats(torch, g, r, tol) for (_, g), (_, r) in zip(got, ref)])


def _rmse(torch: Any, fp64_ref: Any, x: Any) -> float:
    """torch._dynamo.utils.rmse: over every element, in float64 (NaN/Inf propagate)."""
    return float(torch.sqrt(torch.mean(torch.square(fp64_ref - x.double()))).item())


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None  # result.json holds no NaN/Inf


def _same(torch: Any, eager: Any, got: Any, ref64: Any, dtype: str, force_max: bool) -> dict[str, Any]:
    """One output by torch's accuracy rule, ``same(eager, got, fp64_ref=ref64, tol, equal_nan)`` as torch 2.14.1
    computes it (and as its benchmark suite calls it: ``tol`` and ``equal_nan`` by dtype, ``force_max_multiplier``
    for freezing + bf16 + binary-folded convolutions): the verdict and the figures it compared."""
    tol, equal_nan = tolerance_for(dtype).same_tol, equal_nan_for(dtype)
    g = got.detach()  # on its device, as torch's own check runs (the float64 reference is moved there)
    e = eager.detach().to(g.device)
    if e.dtype != g.dtype:
        return {"pass": False, "reason": f"dtype {str(g.dtype).replace('torch.', '')} vs eager's "
                                         f"{str(e.dtype).replace('torch.', '')}"}
    if e.dtype == torch.bool:  # torch compares booleans as uint8 (Triton stores them so)
        ok = bool(torch.allclose(e.to(torch.uint8), g.to(torch.uint8), atol=tol, rtol=tol, equal_nan=equal_nan))
        return {"same_allclose": ok, "pass": ok}
    allclose = bool(torch.allclose(e, g, atol=tol, rtol=tol, equal_nan=equal_nan))
    if not g.is_floating_point():  # the suite keeps integer outputs integer in its fp64 reference: allclose decides
        return {"same_allclose": allclose, "pass": allclose}
    r = ref64.detach().to(g.device).double()
    eager_rmse, mode_rmse = _rmse(torch, r, e), _rmse(torch, r, g)
    nan_corner = (not allclose and not bool(r.isnan().any()) and not bool(g.isnan().any()) and bool(e.isnan().any())
                  and bool(torch.allclose(r.to(g.dtype), g, atol=4e-2, rtol=4e-2, equal_nan=equal_nan)))
    multiplier = reference_multiplier(str(g.dtype), int(r.numel()), tuple(e.shape), tol, force_max=force_max)
    ok = reference_pass(allclose_eager=allclose, nan_corner=nan_corner, mode_rmse=mode_rmse, eager_rmse=eager_rmse,
                        multiplier=multiplier, tol=tol, equal_nan=equal_nan)
    out: dict[str, Any] = {"same_allclose": allclose, "pass": ok, "rmse": _finite(mode_rmse),
                           "eager_rmse": _finite(eager_rmse), "multiplier": multiplier,
                           "bound_rmse": _finite(reference_bound(eager_rmse, multiplier, tol))}
    if nan_corner:
        out["note"] = "eager has NaN where the reference and this mode have none (torch counts that as better)"
    return out


def _output_record(torch: Any, name: str, got: Any, eager: Any, ref: Any | None, tol: Any, dtype: str,
                   force_max: bool, ref_dtype: str = "float64") -> dict[str, Any]:
    """One output tensor: its scale, its errors against eager and against the reference, torch's verdict."""
    ve = _summary([_stats(torch, got, eager, tol)])
    ve["pass"] = bool(ve["allclose"]) and not ve["new_nonfinite"]
    rms, peak = _scale(torch, ref if ref is not None else eager)
    rec: dict[str, Any] = {"name": name, "shape": list(got.shape), "dtype": str(got.dtype).replace("torch.", ""),
                           "elements": int(got.numel()), "rms": rms, "max_abs_value": peak, "vs_eager": ve}
    if ref is not None:
        vr = _summary([_stats(torch, got, ref, tol)])
        er = _summary([_stats(torch, eager, ref, tol)])
        vr.update(eager_max_abs=er["max_abs"], eager_nonfinite=er["new_nonfinite"])
        vr.update(_same(torch, eager, got, ref, dtype, force_max))
        if vr.get("rmse") is not None and rms:
            vr["rel_rmse"] = vr["rmse"] / rms
        if vr["pass"] is False and "reason" not in vr:
            vr["reason"] = _same_reason(name, vr, tolerance_for(dtype).same_tol, ref_dtype)
        rec["vs_reference"] = vr
    if rms:
        ve["rel_rmse"] = ve["rmse"] / rms
    return rec


def _scale(torch: Any, x: Any) -> tuple[float | None, float | None]:
    """An output's own scale: the root mean square and the largest magnitude of its finite elements."""
    x64 = x.detach().double()
    finite = x64[torch.isfinite(x64)]
    if not finite.numel():
        return None, None
    return float(finite.square().mean().sqrt().item()), float(finite.abs().max().item())


def _same_reason(name: str, vr: dict[str, Any], tol: float, ref_dtype: str = "float64") -> str:
    """Why torch's rule failed one output, with its numbers."""
    if vr.get("rmse") is None:
        return f"{name}: NaN/Inf in its rmse against the {ref_dtype} reference (eager's {_g(vr.get('eager_rmse'))})"
    return (f"{name}: rmse {_g(vr['rmse'])} vs the {ref_dtype} reference > {vr['multiplier']:g} x eager's "
            f"{_g(vr.get('eager_rmse'))} + tol {tol:g}/10 = {_g(vr.get('bound_rmse'))}")


def _g(x: float | None) -> str:
    return "NaN/Inf" if x is None else f"{x:.3g}"


def _reference_output(torch: Any, model: Any, inputs: list[Any], device: str, run_dtype: str | None,
                      source: Any = None) -> tuple[Named | None, dict]:
    """The same model and inputs in float64, on the run's device. Returns (outputs, how). ``source``: the model
    and inputs as the model file built them, before --dtype cast them (capture/setup.py ``_reference_source``);
    the reference is made from those when given, as torch's benchmark suite makes its own.

    float64 everywhere, not a float32 copy with TF32 switched off on CUDA: changing the process-wide TF32 flags
    and putting them back broke the next Dynamo recompile on the H200 (torch 2.11: "cuDNN conv and cuDNN RNN
    have different TF32 flags", dynamic mode at the second sweep point), and those flags are part of Inductor's
    FX-graph cache key. float64 needs no global state; its cost (a second copy of the weights, slower GEMMs)
    is paid once per mode, and a model that cannot afford it is reported as skipped, not failed.

    Where the model cannot run in float64 (``torch._grouped_mm`` has no float64 kernel, on the GPU or the CPU:
    "Expected mat_a to be Float32, BFloat16 or Float16 matrix, got Double") and the run is in a lower precision
    (float16, bfloat16), the reference runs in float32 instead (``how["float64_error"]`` says why): still more
    precise than the run, so eager's own error against it stays the yardstick of torch's rule (torch's benchmark
    suite falls back to a cosine check there). A float32 run gets no float32 reference of itself: skipped."""
    import copy

    from kernelscope.modelfile import compute_dtype
    from kernelscope.tolerance import LOW_PRECISION, dtype_name

    how: dict[str, Any] = {"dtype": "float64", "device": device}
    try:
        if source is not None:
            m, xs = source  # a private copy: cast in place
            how["weights"] = compute_dtype(m, xs, None) or ""
        else:
            m, xs = copy.deepcopy(model), inputs
            how["weights"] = run_dtype or ""
        m, xs = _cast(torch, m, xs, device, torch.float64)
    except Exception as exc:  # a model that cannot be copied or cast (custom objects, quantized weights)
        how["skipped"] = f"the model could not be copied to float64: {type(exc).__name__}: {exc}"[:300]
        return None, how
    out: Named | None = None
    error = None
    try:
        try:
            out = _forward(torch, m, xs)
        except Exception as exc:  # e.g. an op without a float64 kernel, or no memory for a second copy
            error = _first_line(exc)  # (the exception, and the float64 activations its traceback holds, go here)
        if error is not None and dtype_name(run_dtype) in LOW_PRECISION:
            how.update(dtype="float32", float64_error=error)
            if device == "cuda":
                torch.cuda.empty_cache()
            try:
                # float64 -> float32 is exact for weights built in float32 or lower
                m, xs = _cast(torch, m, xs, device, torch.float32)
                out = _forward(torch, m, xs)
            except Exception as exc:
                how["skipped"] = f"the float64 reference failed ({error}), and in float32: {_first_line(exc)}"[:300]
        elif error is not None:
            how["skipped"] = f"the float64 reference failed: {error}"[:300]
    finally:
        del m, xs
        if device == "cuda":
            torch.cuda.empty_cache()
    return out, how


def _cast(torch: Any, m: Any, xs: list[Any], device: str, dtype: Any) -> tuple[Any, list[Any]]:
    """The model (cast in place) and its floating inputs in ``dtype`` on ``device``."""
    if isinstance(m, torch.nn.Module):
        m = m.to(device=device, dtype=dtype)
    return m, [x.to(device=device, dtype=dtype) if isinstance(x, torch.Tensor) and x.is_floating_point()
               else x.to(device) if isinstance(x, torch.Tensor) else x for x in xs]


def _forward(torch: Any, m: Any, xs: list[Any]) -> Named:
    """One forward of the reference copy: its outputs in float64, on the CPU."""
    from kernelscope.modelfile import named_output_tensors

    with torch.no_grad():
        return [(n, t.detach().double().cpu()) for n, t in named_output_tensors(m(*xs))]


def _first_line(exc: BaseException) -> str:
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first}"[:300]


def _numerics(torch: Any, got: Named, eager: Named, reference: Named | None, how: dict[str, Any],
              dtype: str | None, *, force_max: bool = False, baseline: bool = False) -> dict[str, Any]:
    """The mode's numerics record: vs eager, vs the high-precision reference (torch's rule per output), every
    output's own errors and scale, the tolerance and rules used. ``baseline``: ``got`` is eager's own (a second
    call), whose only failure against the reference is an overflow."""
    tol = tolerance_for(dtype)
    vs_eager = _compare(torch, got, eager, tol)
    vs_eager.setdefault("pass", bool(vs_eager.get("allclose")) and not vs_eager.get("new_nonfinite"))
    out: dict[str, Any] = {
        "vs_eager": vs_eager,
        "tolerance": {"dtype": tol.dtype, "atol": tol.atol, "rtol": tol.rtol,
                      "vs_eager_rule": "every element within atol + rtol*|eager| (torch.allclose), no new NaN/Inf",
                      "vs_reference_rule": f"{RULE_NAME} per output: allclose(eager, mode, atol=tol, rtol=tol), "
                                           f"else rmse(mode) <= multiplier x rmse(eager) + tol/10 against the "
                                           f"reference (multiplier 3 for fp16/bf16 outputs or under 1000 "
                                           f"elements, else 2); NaN/Inf where the reference is finite fails",
                      "same_tol": tol.same_tol, "equal_nan": equal_nan_for(dtype), "rule": RULE_NAME,
                      "force_max_multiplier": force_max},
        "reference": how,
    }
    structure = _structure(got, eager) or (_structure(got, reference) if reference is not None else "")
    if not structure:
        refs = reference if reference is not None else [(n, None) for n, _ in got]
        out["outputs"] = [_output_record(torch, name, g, e, r, tol, tol.dtype, force_max, how.get("dtype", "float64"))
                          for (name, g), (_, e), (_, r) in zip(got, eager, refs)]
    if reference is not None:
        vr = _compare(torch, got, reference, tol)
        ve = _compare(torch, eager, reference, tol)
        vr["eager_rmse"] = ve.get("rmse")
        vr["eager_max_abs"] = ve.get("max_abs")
        vr["eager_nonfinite"] = ve.get("new_nonfinite")
        per = [o["vs_reference"] for o in out.get("outputs", ())]
        same_ok = all(p["pass"] for p in per) if not structure else False
        # torch's rule compares with eager, so an overflow eager shares passes it; kernelscope also fails any mode
        # (eager included) with NaN/Inf where the float64 reference is finite: the model overflows in this dtype
        vr.setdefault("pass", same_ok and not vr.get("new_nonfinite"))
        if len(per) == 1:  # one output: its bound is the mode's (several outputs each have their own)
            vr["bound_rmse"], vr["multiplier"] = per[0].get("bound_rmse"), per[0].get("multiplier")
        if vr.get("new_nonfinite"):
            shared = (" (eager's too: torch's rule, which compares with eager, passes it)" if same_ok and not baseline
                      else "")
            vr["reason"] = f"{vr['new_nonfinite']} NaN/Inf where the {how['dtype']} reference is finite{shared}"
        elif vr["pass"] is False:
            vr["reason"] = next((p["reason"] for p in per if p.get("reason")), vr.get("note") or structure)
        out["vs_reference"] = vr
    if not vs_eager["pass"]:
        vs_eager["reason"] = (f"{vs_eager.get('mismatch_fraction', 0):.3%} of elements outside atol {tol.atol:g} + "
                              f"rtol {tol.rtol:g} of eager" if vs_eager.get("max_abs") is not None
                              else vs_eager.get("note", "outputs differ in structure"))
    return out
