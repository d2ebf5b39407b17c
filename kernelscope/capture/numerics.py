"""A mode's numerics: its outputs against eager's and against a float64 reference of the same model.

The comparison runs on the worker's tensors, so it is capture's (the only layer that holds them); the table it
judges them by is kernelscope/tolerance.py's, a base module imported here at the top, so the capture worker and
analysis/numerics.py (which re-reads the recorded figures without torch) judge by one table and one set of pass
rules. tolerance.py is pure and tiny: importing it costs a timing-only process nothing.
"""

from __future__ import annotations

from typing import Any

from kernelscope.tolerance import REFERENCE_MULTIPLIER, reference_bound, reference_pass, tolerance_for


def _flatten(torch: Any, out: Any) -> list[Any]:
    from kernelscope.modelfile import output_tensors  # dataclass / ModelOutput outputs too, not only pytrees

    return output_tensors(out)


def _snapshot(torch: Any, out: Any) -> list[Any]:
    # CUDA-graph outputs are overwritten by the next replay: keep a copy.
    return [t.detach().clone() for t in _flatten(torch, out)]


def _compare(torch: Any, got: list[Any], ref: list[Any], tol: Any) -> dict[str, Any]:
    """Errors of ``got`` against ``ref``, in float64 on the CPU.

    max_abs; max_rel norm-wise (max |got-ref| / max |ref|: element-wise relative error explodes at zeros); rmse;
    mismatch_fraction: elements outside ``tol`` as torch.allclose counts them (|got-ref| > atol + rtol*|ref|, a
    NaN/Inf on one side only, or a different NaN/Inf); differ_fraction: elements not bit-equal; nonfinite: NaN/Inf
    in ``got``; new_nonfinite: of those, where ``ref`` is finite.
    """
    if len(got) != len(ref):
        return {"max_abs": None, "max_rel": None, "note": f"{len(got)} outputs vs {len(ref)} in the reference",
                "pass": False, "allclose": False}
    max_abs, ref_max, sq, n_finite = 0.0, 0.0, 0.0, 0
    nonfinite = new_nonfinite = mismatch = differ = total = 0
    for g, r in zip(got, ref):
        if g.shape != r.shape:
            return {"max_abs": None, "max_rel": None, "note": f"shape {tuple(g.shape)} vs {tuple(r.shape)}",
                    "pass": False, "allclose": False}
        g64, r64 = g.detach().cpu().double(), r.detach().cpu().double()
        if not g64.numel():
            continue
        gf, rf = torch.isfinite(g64), torch.isfinite(r64)
        both = gf & rf
        nonfinite += int((~gf).sum().item())
        new_nonfinite += int((~gf & rf).sum().item())
        d = torch.where(both, (g64 - r64).abs(), torch.zeros_like(g64))
        max_abs = max(max_abs, float(d.max().item()))
        if rf.any():
            ref_max = max(ref_max, float(r64[rf].abs().max().item()))
        sq += float((d * d).sum().item())
        n_finite += int(both.sum().item())
        outside = d > (tol.atol + tol.rtol * torch.where(both, r64.abs(), torch.zeros_like(r64)))
        # NaN/Inf on one side only, or different non-finite values (inf vs nan, +inf vs -inf), are mismatches.
        same_nonfinite = (~gf & ~rf) & ((g64 == r64) | (torch.isnan(g64) & torch.isnan(r64)))
        one_side = ~both & ~same_nonfinite
        mismatch += int((outside | one_side).sum().item())
        differ += int(((d > 0) | one_side).sum().item())
        total += g64.numel()
    max_rel = max_abs / ref_max if ref_max > 0 else (0.0 if max_abs == 0 else None)
    out = {"max_abs": max_abs, "max_rel": max_rel, "rmse": (sq / n_finite) ** 0.5 if n_finite else 0.0,
           "mismatch_fraction": (mismatch / total) if total else 0.0,
           "differ_fraction": (differ / total) if total else 0.0,
           "nonfinite": nonfinite, "new_nonfinite": new_nonfinite, "elements": total}
    out["allclose"] = mismatch == 0
    return out


def _reference_output(torch: Any, model: Any, inputs: list[Any], device: str,
                      run_dtype: str) -> tuple[list[Any] | None, dict]:
    """The same model and inputs in float64, on the run's device. Returns (outputs, how).

    float64 everywhere, not a float32 copy with TF32 switched off on CUDA: changing the process-wide TF32 flags
    and putting them back broke the next Dynamo recompile on the H200 (torch 2.11: "cuDNN conv and cuDNN RNN
    have different TF32 flags", dynamic mode at the second sweep point), and those flags are part of Inductor's
    FX-graph cache key. float64 needs no global state; its cost (a second copy of the weights, slower GEMMs)
    is paid once per mode, and a model that cannot afford it is reported as skipped, not failed."""
    import copy

    ref_dtype = torch.float64
    how: dict[str, Any] = {"dtype": "float64", "device": device}
    try:
        m = copy.deepcopy(model)
        if isinstance(m, torch.nn.Module):
            m = m.to(dtype=ref_dtype)
        xs = [x.to(ref_dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    except Exception as exc:  # a model that cannot be copied or cast (custom objects, quantized weights)
        how["skipped"] = f"the model could not be copied to float64: {type(exc).__name__}: {exc}"[:300]
        return None, how
    try:
        with torch.no_grad():
            out = [t.detach().double().cpu() for t in _flatten(torch, m(*xs))]
    except Exception as exc:  # e.g. an op without a float64 kernel, or no memory for a second copy
        first = str(exc).splitlines()[0] if str(exc) else ""
        how["skipped"] = f"the float64 reference failed: {type(exc).__name__}: {first}"[:300]
        out = None
    finally:
        del m, xs
        if device == "cuda":
            torch.cuda.empty_cache()
    return out, how


def _numerics(torch: Any, got: list[Any], eager: list[Any], reference: list[Any] | None, how: dict[str, Any],
              dtype: str) -> dict[str, Any]:
    """The mode's numerics record: vs eager, vs the high-precision reference, the tolerance and rules used."""
    tol = tolerance_for(dtype)
    vs_eager = _compare(torch, got, eager, tol)
    vs_eager.setdefault("pass", bool(vs_eager.get("allclose")) and not vs_eager.get("new_nonfinite"))
    out: dict[str, Any] = {
        "vs_eager": vs_eager,
        "tolerance": {"dtype": tol.dtype, "atol": tol.atol, "rtol": tol.rtol,
                      "vs_eager_rule": "every element within atol + rtol*|eager| (torch.allclose), no new NaN/Inf",
                      "vs_reference_rule": f"within atol + rtol*|reference| everywhere, or rmse <= "
                                           f"{REFERENCE_MULTIPLIER:g} * eager's rmse + atol/10; no new NaN/Inf"},
        "reference": how,
    }
    if reference is not None:
        vr = _compare(torch, got, reference, tol)
        ve = _compare(torch, eager, reference, tol)
        vr["eager_rmse"] = ve.get("rmse")
        vr["eager_max_abs"] = ve.get("max_abs")
        vr["eager_nonfinite"] = ve.get("new_nonfinite")
        vr["bound_rmse"] = reference_bound(ve.get("rmse"), tol)
        if "pass" not in vr:
            vr["pass"] = reference_pass(vr.get("rmse"), ve.get("rmse"), vr.get("mismatch_fraction"),
                                        int(vr.get("new_nonfinite") or 0), tol)
        if vr.get("new_nonfinite"):
            vr["reason"] = f"{vr['new_nonfinite']} NaN/Inf where the {how['dtype']} reference is finite"
        elif vr["pass"] is False:
            vr["reason"] = (f"rmse {vr['rmse']:.3g} vs the {how['dtype']} reference exceeds "
                            f"{REFERENCE_MULTIPLIER:g} x eager's {ve.get('rmse', 0):.3g} + atol/10")
        out["vs_reference"] = vr
    if not vs_eager["pass"]:
        vs_eager["reason"] = (f"{vs_eager.get('mismatch_fraction', 0):.3%} of elements outside atol {tol.atol:g} + "
                              f"rtol {tol.rtol:g} of eager" if vs_eager.get("max_abs") is not None
                              else vs_eager.get("note", "outputs differ in structure"))
    return out
