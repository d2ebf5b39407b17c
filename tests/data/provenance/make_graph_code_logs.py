"""Re-record the Dynamo graph_code logs in this folder (torch 2.14.1, CPU, a few seconds):

    python tests/data/provenance/make_graph_code_logs.py

backend="eager" (Dynamo traces and logs the graphs, nothing is compiled). Two logs of one model: with Inductor's
freezing under no_grad (parameters installed as graph attributes, flattened names: graph_code_frozen.log) and
without (parameters inlined as graph inputs: graph_code_inlined.log). The model has a graph break in forward, is
called at a second batch size (a recompile), has attribute names with underscores and capitals (LayerNorm), a
ModuleList, an in-place add, ``x @ w.t()`` on a parameter and a root parameter.
"""

import logging
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


class_src = r'''
import torch


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.in_proj = torch.nn.Linear(d, 2 * d)
        self.LayerNorm = torch.nn.LayerNorm(2 * d)
        self.out_proj = torch.nn.Linear(2 * d, d, bias=False)

    def forward(self, x):
        h = torch.relu(self.LayerNorm(self.in_proj(x)))
        y = h @ self.out_proj.weight.t()
        y += x
        return y


class Net(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(d), Block(d)])
        self.scale = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        x = self.blocks[0](x)
        torch._dynamo.graph_break()
        x = self.blocks[1](x) * self.scale
        return x
'''


def main() -> None:
    if len(sys.argv) > 1:  # the child: one log
        import torch

        sys.path.insert(0, str(HERE))
        from graph_code_model import Net

        torch._inductor.config.freezing = sys.argv[1] == "frozen"
        torch._dynamo.config.automatic_dynamic_shapes = False  # a static recompile, as kernelscope's static modes
        m = Net().eval()
        fn = torch.compile(m, backend="eager")
        with torch.no_grad():
            fn(torch.randn(4, 8))
            fn(torch.randn(6, 8))
        return
    (HERE / "graph_code_model.py").write_text(class_src.lstrip())
    for kind in ("frozen", "inlined"):
        env = dict(os.environ, TORCH_LOGS="graph_code,recompiles")
        proc = subprocess.run([sys.executable, __file__, kind], env=env, capture_output=True, text=True, check=True)
        # the machine's paths stay out of the fixture
        text = proc.stderr.replace(str(HERE), "/fixture")
        (HERE / f"graph_code_{kind}.log").write_text(text)
    logging.info("done")


if __name__ == "__main__":
    main()
