"""Issue 26.3: is ResNet-50 bf16's compiled error against the float64 reference Inductor's doing or kernelscope's?

Runs on a GPU (H200): torchvision ResNet-50, random weights, eval mode, batch 8 at 224 px (seeded as kernelscope
seeds), in bfloat16 and float32; eager and torch.compile (default, and with Inductor options that change numerics:
emulate_precision_casts, layout_optimization off), each compared with a float64 copy of the model: rmse, max abs,
the output's scale, and torch's own verdict ``torch._dynamo.utils.same(ref=eager, res=compiled, fp64_ref=ref64)``.
Then per stage (stem, layer1..4, head): each stage compiled alone on the eager input of that stage, its error vs
the float64 stage on the same input, to find where the error comes from.
Prints one JSON line per measurement. Usage: python3 benchmarks/resnet_numerics.py [arch] [batch]
"""

from __future__ import annotations

import copy
import json
import sys

import torch
import torchvision


def stats(out, ref):
    d = (out.double() - ref).flatten()
    return {"rmse": d.pow(2).mean().sqrt().item(), "max_abs": d.abs().max().item(),
            "ref_rms": ref.pow(2).mean().sqrt().item(), "ref_max": ref.abs().max().item()}




def run(arch: str, batch: int) -> None:
    from torch._dynamo.utils import same

    dev = "cuda"
    torch.manual_seed(0)
    base = getattr(torchvision.models, arch)(weights=None).eval()
    g = torch.Generator().manual_seed(1)
    x32 = torch.randn(batch, 3, 224, 224, generator=g)
    ref_model = copy.deepcopy(base).double().to(dev)
    with torch.no_grad():
        ref = ref_model(x32.double().to(dev))
    for dtype in (torch.bfloat16, torch.float32):
        model = copy.deepcopy(base).to(dev, dtype)
        x = x32.to(dev, dtype)
        with torch.no_grad():
            eager = model(x)
        e = stats(eager, ref)
        print(json.dumps({"what": "eager", "dtype": str(dtype), **e}), flush=True)
        for name, opts in (("default", {}), ("emulate_precision_casts", {"emulate_precision_casts": True}),
                           ("no_layout_opt", {"layout_optimization": False}),
                           ("freezing", {"freezing": True})):
            torch._dynamo.reset()
            import torch._inductor.config as ic
            with ic.patch(opts), torch.no_grad():
                fn = torch.compile(model)
                out = fn(x)
                out2 = fn(x)
            c = stats(out, ref)
            verdict = same(eager, out, fp64_ref=ref, tol=1e-2 if dtype == torch.bfloat16 else 1e-4)
            print(json.dumps({"what": name, "dtype": str(dtype), **c, "vs_eager_max_abs":
                              (out.float() - eager.float()).abs().max().item(), "rerun_identical":
                              bool(torch.equal(out, out2)), "torch_same": bool(verdict),
                              "ratio_to_eager_rmse": c["rmse"] / max(e["rmse"], 1e-30)}), flush=True)
        # per stage, bf16 only: where does the compiled error come from?
        if dtype != torch.bfloat16:
            continue
        stages = [("stem", torch.nn.Sequential(model.conv1, model.bn1, model.relu, model.maxpool)),
                  ("layer1", model.layer1), ("layer2", model.layer2), ("layer3", model.layer3),
                  ("layer4", model.layer4),
                  ("head", torch.nn.Sequential(model.avgpool, torch.nn.Flatten(1), model.fc))]
        ref_stages = [torch.nn.Sequential(ref_model.conv1, ref_model.bn1, ref_model.relu, ref_model.maxpool),
                      ref_model.layer1, ref_model.layer2, ref_model.layer3, ref_model.layer4,
                      torch.nn.Sequential(ref_model.avgpool, torch.nn.Flatten(1), ref_model.fc)]
        h = x
        for (name, st), rst in zip(stages, ref_stages):
            with torch.no_grad():
                r = rst(h.double())
                eo = st(h)
                torch._dynamo.reset()
                co = torch.compile(st)(h)
            print(json.dumps({"what": "stage", "stage": name, "eager": stats(eo, r), "compiled": stats(co, r)}),
                  flush=True)
            h = eo


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else "resnet50", int(sys.argv[2]) if len(sys.argv) > 2 else 8)
