"""Where each GEMM came from: its nn.Module path and source line.

* Compiled modes: the wrapper comment above a call site names its Dynamo source nodes ("Topologically Sorted
  Source Nodes: [linear_1, x, layer_norm_1, linear_2]"); the compile log's ``graph_code`` artifact (kernelscope's
  workers run with TORCH_LOGS=graph_code) prints each Dynamo graph with the parameters every node reads
  (``l_self_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_``) and the source line
  above it. The GEMM's node is the last GEMM-class node among the call site's source nodes (its inputs come
  first in topological order).
* Eager: the capture worker wraps each module's forward in a profiler range ``kernelscope.module: <path>``;
  the innermost range around the GEMM's CPU op is its module.

No torch import.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kernelscope import vocab

RANGE_PREFIX = "kernelscope.module: "


@dataclass(slots=True)
class ModuleIndex:
    """Compiled graphs' node provenance, one entry per output-code module (graph) in order."""

    graphs: list[dict[str, Any]]

    @staticmethod
    def from_log(log_text: str | None, codes: Sequence[Any]) -> ModuleIndex | None:
        if not log_text or "__graph_code" not in log_text and "TRACED GRAPH" not in log_text:
            return None
        try:
            from kernelscope.provenance import parse_graph_code
        except ImportError:  # pragma: no cover - provenance ships with kernelscope
            return None
        graphs = []
        for gs in parse_graph_code(log_text):
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


class TraceModules:
    """Innermost ``kernelscope.module:`` range around a CPU event, per thread (eager captures)."""

    def __init__(self, cpu_events: Sequence[Any]):
        by_tid: dict[object, list[tuple[float, float, str]]] = defaultdict(list)
        for e in cpu_events:
            name = e.name
            if name.startswith(RANGE_PREFIX):
                by_tid[e.tid].append((e.ts, e.ts + e.dur, name[len(RANGE_PREFIX):]))
        self._ranges: dict[object, list[tuple[float, float, str]]] = {}
        self._starts: dict[object, list[float]] = {}
        for tid, rs in by_tid.items():
            rs.sort(key=lambda r: (r[0], -r[1]))
            self._ranges[tid] = rs
            self._starts[tid] = [r[0] for r in rs]

    def __bool__(self) -> bool:
        return bool(self._ranges)

    def module_at(self, ts: float, tid: object) -> str:
        rs = self._ranges.get(tid)
        if not rs:
            return ""
        i = bisect.bisect_right(self._starts[tid], ts) - 1
        # ranges nest: walk back to the innermost one that still contains ts (a few steps: nesting depth)
        best = ""
        best_start = float("-inf")
        steps = 0
        while i >= 0 and steps < 4096:
            s, e, path = rs[i]
            if s <= ts < e and s >= best_start:
                best, best_start = path, s
                break
            i -= 1
            steps += 1
        return best
