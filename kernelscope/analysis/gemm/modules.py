"""Where each GEMM came from: its nn.Module path and source line.

* Compiled modes: the wrapper comment above a call site names its Dynamo source nodes ("Topologically Sorted
  Source Nodes: [linear_1, x, layer_norm_1, linear_2]"); the compile log's ``graph_code`` artifact (kernelscope's
  workers run with TORCH_LOGS=graph_code) prints each Dynamo graph with the parameters every node reads
  (``l_self_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_``) and the source line
  above it. The GEMM's node is the last GEMM-class node among the call site's source nodes (its inputs come
  first in topological order).
* Eager: the capture worker wraps each module's forward in a profiler range ``kernelscope.module: <path>``;
  the innermost range around the GEMM's CPU op is its module (``kernelscope.provenance.module_index``).

No torch import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kernelscope import vocab
from kernelscope.provenance import parse_graph_code


@dataclass(slots=True)
class ModuleIndex:
    """Compiled graphs' node provenance, one entry per output-code module (graph) in order."""

    graphs: list[dict[str, Any]]

    @staticmethod
    def from_log(log_text: str | None, codes: Sequence[Any], params: Sequence[str] | None = None
                 ) -> ModuleIndex | None:
        """``params``: the model's parameter names (capture.json "param_names"): with freezing, Dynamo flattens
        them into attribute names that only the real names can split back into a path."""
        if not log_text or "__graph_code" not in log_text and "TRACED GRAPH" not in log_text:
            return None
        graphs = []
        for gs in parse_graph_code(log_text, params):
            nodes = getattr(gs, "nodes", gs)
            graphs.append(dict(nodes))
        return ModuleIndex(_align_graphs(graphs, codes)) if graphs else None

    def lookup(self, graph: int, source_nodes: Sequence[str]) -> tuple[str, str, str]:
        """(module, source, evidence) of the GEMM among a call site's source nodes; '' when unknown."""
        if graph >= len(self.graphs) or not self.graphs[graph]:
            return "", "", ""
        nodes = self.graphs[graph]
        cands = [nodes[n] for n in source_nodes if n in nodes]
        gemms = [c for c in cands if vocab.is_gemm(str(getattr(c, "op", "")))]
        pick = gemms[-1] if gemms else None
        if pick is None:
            return "", "", ""
        module = getattr(pick, "module", None) or ""
        source = getattr(pick, "source", None) or ""
        if not module and not source:
            return "", "", ""
        ev = (f"[provenance] source node {getattr(pick, 'name', '?')} ({getattr(pick, 'op', '?')}) of the call "
              f"site is {module or 'an unnamed module'}" + (f" at {source}" if source else "")
              + " (TORCH_LOGS=graph_code)")
        return module, source, ev


def _align_graphs(graphs: list[dict[str, Any]], codes: Sequence[Any]) -> list[dict[str, Any]]:
    """Output-code module i <-> the traced graph whose nodes cover its call sites' source nodes (graphs are
    compiled, and their code saved, in the order Dynamo traced them; recompiles repeat a graph)."""
    out: list[dict[str, Any]] = []
    j = 0
    for code in codes:
        wanted = {n for L in code.launches for n in L.source_nodes} | {
            n for k in code.kernels for n in k.source_nodes}
        best = None
        for cand in list(range(j, len(graphs))) + list(range(0, j)):
            if wanted and wanted <= set(graphs[cand]):
                best = cand
                break
        if best is None and j < len(graphs):
            best = j
        out.append(graphs[best] if best is not None else {})
        if best is not None:
            j = best + 1
    return out
