"""Where each GEMM came from: its nn.Module path and source line.

* Compiled modes, the module: the one whose forward called the GEMM's traced (Dynamo) node, as Dynamo's
  ``nn_module_stack`` records it (the worker's ``graph_N.modules.json`` beside each graph's code). The traced node
  is found as below; the call names the module also where the GEMM reads no weight of its own (the rotary
  embedding's ``inv_freq @ position_ids``, attention's bmm's, SDPA decomposed into bmm's), where the weight belongs
  to a module used through a function (nn.MultiheadAttention's projections) and where a weight is tied across
  modules (an LM head tied to the token embedding is ``lm_head``, as in eager). A GEMM that ran inside the call
  of another op (a custom op's mm's) is named by the module that called the op: the call's own traced node.
  Without that file (older captures,
  a torch whose Inductor the worker could not wrap) the module is read as the next two points say.
* Compiled modes, first choice: Inductor's provenance (torch with ``trace.provenance_tracking_level``; kernelscope's
  compiled workers turn it on and save ``graph_N.provenance.json`` beside each graph's code). Each call site
  carries a handle (``# [Provenance debug handles] extern_kernels.addmm:3``); the provenance maps the handle to the
  post-grad nodes it computes, those to the pre-grad (Dynamo) nodes they came from, and gives the user stack of
  the call (``model.py:24  g = s.b(h)``). The pre-grad node is a ``graph_code`` node, which spells the module.
* Compiled modes, fallback (older torch, provenance off): the wrapper comment above a call site names its Dynamo
  source nodes ("Topologically Sorted Source Nodes: [linear_1, x, layer_norm_1, linear_2]"); the compile log's
  ``graph_code`` artifact (kernelscope's workers run with TORCH_LOGS=graph_code) prints each Dynamo graph with the
  parameters every node reads (``l_self_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_``)
  and the source line above it. The GEMM's node is the last GEMM-class node among the call site's source nodes
  (its inputs come first in topological order).
* Eager: the capture worker wraps each module's forward in a profiler range ``kernelscope.module: <path>`` and each
  GEMM-class call in ``kernelscope.source: <file>:<line>``; the innermost range around the GEMM's CPU op gives both
  (``kernelscope.provenance.module_index``; analysis/gemm/align.py).

No torch import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kernelscope import vocab
from kernelscope.provenance import GraphCallers, parse_graph_code, short_source
from kernelscope.result import Evidence
from kernelscope.result import EvidenceRule as Rule


@dataclass(slots=True)
class ModuleIndex:
    """Compiled graphs' node provenance, one entry per output-code module (graph) in order: the ``graph_code``
    nodes (may be empty; each node's ``module`` is its calling module where the callers record names it),
    Inductor's provenance of the graph and the module that called each traced node (either may be None)."""

    graphs: list[dict[str, Any]]
    provenance: list[Any] = field(default_factory=list)
    callers: list[GraphCallers | None] = field(default_factory=list)

    @staticmethod
    def build(log_text: str | None, codes: Sequence[Any], params: Sequence[str] | None = None,
              root: str = "") -> ModuleIndex | None:
        """``params``: the model's parameter names (capture.json "param_names"): with freezing, Dynamo flattens
        them into attribute names that only the real names can split back into a path; ``root``: a prefix of
        the paths that the user's model lacks (analysis/mode.py ``module_prefix``). None when neither the
        log's graph_code nor any graph's provenance is there."""
        graphs: list[dict[str, Any]] = []
        if log_text and ("__graph_code" in log_text or "TRACED GRAPH" in log_text):
            for gs in parse_graph_code(log_text, params, root):
                graphs.append(dict(gs.nodes))
        prov = [getattr(c, "provenance", None) for c in codes]
        callers = [getattr(c, "callers", None) for c in codes]
        if not graphs and not any(p is not None for p in prov) and not any(c is not None for c in callers):
            return None
        aligned = _align_graphs(graphs, codes) if graphs else [{} for _ in codes]
        # the call names the module: every reader of a node's module (the order fallback too) gets the caller
        aligned = [_called_by(nodes, c) for nodes, c in zip(aligned, callers)]
        return ModuleIndex(aligned, prov, callers)

    def lookup(self, graph: int, source_nodes: Sequence[str], handle: str | None = None, *, inside: bool = False
               ) -> tuple[str, str, Evidence | None]:
        """(module, source, evidence) of the GEMM at a call site (``inside``: a GEMM the called op ran inside it);
        '' (None) when unknown. Inductor's provenance of the call site's handle first, the call site's source-node
        comment second."""
        found = self._by_provenance(graph, handle, inside)
        if found is not None:
            return found
        return self._by_comment(graph, source_nodes)

    def _nodes(self, graph: int) -> dict[str, Any]:
        return self.graphs[graph] if graph < len(self.graphs) else {}

    def _stack(self, graph: int, node: str) -> tuple[str, ...] | None:
        """The modules whose forwards called a traced node, innermost first; None when not recorded."""
        callers = self.callers[graph] if graph < len(self.callers) else None
        return callers.stack(node) if callers is not None else None

    def _called_from(self, graph: int, names: Sequence[str]) -> str | None:
        """The one traced node among ``names`` that stands for all of them by its caller: the first that the
        callers record, when every recorded one has the same innermost caller (SDPA's node for the bmm's
        Inductor decomposed it into; a GEMM node with the cast before it); None otherwise."""
        recorded = [(n, s) for n in names if (s := self._stack(graph, n))]
        if not recorded or len({s[0] for _, s in recorded}) != 1:
            return None
        return recorded[0][0]

    def _caller_evidence(self, graph: int, node: str, pick: Any, source: str, **how: Any) -> Evidence:
        """provenance.caller: the traced node's calling modules; ``how``: the call site that led to the node
        (handle, its post-grad node and its line of code), none for the node of a source-node comment."""
        stack = self._stack(graph, node) or ("",)
        return Evidence.of(Rule.PROVENANCE_CALLER, short_source(source) if source else "", node=node,
                           module=stack[0], stack=stack, node_op=str(getattr(pick, "op", "") or "") or None,
                           source=source or None, **how)

    def _gemm_nodes(self, graph: int, names: Sequence[str]) -> list[Any]:
        """The GEMM-class traced nodes among ``names``, in their order (names the graph lacks are skipped)."""
        nodes = self._nodes(graph)
        return [nodes[n] for n in names if n in nodes and vocab.is_gemm(str(getattr(nodes[n], "op", "")))]

    def _site_gemm(self, graph: int, site: Any, inside: bool = False) -> tuple[str, tuple[str, ...]] | None:
        """The call site's GEMM-class post-grad node and the traced nodes it came from (``inside``: for the GEMMs
        the called op ran inside it, the op's own node). A GEMM with a pointwise op fused into the library call by
        a pattern (oneDNN's ``_linear_pointwise.binary(x, residual, W, b, 'add')`` and ``.default(..., 'swish')``
        on a bf16-capable CPU) is the pattern's node ``fn_3``, traced from the
        pointwise op (``hidden_states_9 = residual + linear_6``): the GEMM is the traced GEMM-class node that op
        reads. Its provenance also lists the nodes of its inputs (the GEMMs before it among them), so the first
        GEMM-class node listed would be another layer's."""
        pairs = site.post_to_pre
        if inside and len(pairs) == 1:
            # a GEMM that ran inside the call of another op (a custom op such as transformers'
            # grouped_mm_fallback, one mm per expert): the op's own traced node is the call that ran it
            post, pre = pairs[0]
            return str(post), tuple(pre)
        if pairs and _PATTERN_NODE.match(pairs[0][0]):
            gemms = self._gemms_read_by(graph, pairs[0][1])
            if len(gemms) == 1:
                return pairs[0][0], (gemms[0],)
        gemm: tuple[str, tuple[str, ...]] | None = site.gemm_nodes()
        return gemm

    def _gemms_read_by(self, graph: int, names: Sequence[str]) -> list[str]:
        """The GEMM-class traced nodes whose values these nodes read, directly or through ops that only pass a
        value on (a Dropout in eval, a view: timm's ``fc2 -> drop2`` before the residual add)."""
        nodes = self._nodes(graph)
        found: list[str] = []
        seen = set(names)
        todo = [r for n in names if n in nodes for r in nodes[n].reads]
        while todo:
            r = todo.pop(0)
            node = nodes.get(r)
            if r in seen or node is None:
                continue
            seen.add(r)
            if vocab.is_gemm(str(node.op or "")):
                found.append(r)
            elif vocab.op_class(str(node.op or "")) in ("view", "cast"):  # hands the value on: Dropout, reshape
                todo.extend(node.reads)
        return found

    def _by_provenance(self, graph: int, handle: str | None, inside: bool = False
                       ) -> tuple[str, str, Evidence] | None:
        prov = self.provenance[graph] if graph < len(self.provenance) else None
        site = prov.site(handle) if prov is not None else None
        if site is None:
            return None
        gemm = self._site_gemm(graph, site, inside)
        if gemm is None:
            return None
        post, pre = gemm
        gemms = self._gemm_nodes(graph, pre)
        pick = gemms[0] if len(gemms) == 1 else None
        # the traced node the GEMM came from: its GEMM-class node, else (no graph_code, or an op Inductor
        # decomposed into GEMMs) the one its caller stands for, where the GEMM node is the call's own first node
        # (an extern call; a call's later nodes are those of its inputs, another GEMM among them)
        own = bool(site.post_to_pre) and site.post_to_pre[0][0] == post
        node = str(getattr(pick, "name", "")) if pick is not None else (
            self._called_from(graph, pre) if own else None) or ""
        stack = self._stack(graph, node) if node else None
        if pick is None and stack is not None:
            pick = self._nodes(graph).get(node)
        module = stack[0] if stack else (getattr(pick, "module", None) or "") if pick is not None else ""
        # the traced node's own line is the GEMM's; the call's first stack may be an op fused before it
        source = ((getattr(pick, "source", None) or "") if pick is not None else "") or site.source
        if not module and not source and stack is None:
            return None
        # the call's own line of code, when the traced node gives no line of its own
        code = site.code if source and site.code and not (pick is not None and getattr(pick, "source", None)) else None
        if stack is not None:
            return module, source, self._caller_evidence(graph, node, pick, source, handle=site.handle,
                                                         post=post, traced=tuple(pre), code=code)
        ev = Evidence.of(Rule.PROVENANCE_CALL_SITE, short_source(source) if source else "", handle=site.handle,
                         node=post, traced=tuple(pre), source=source or None, code=code,
                         node_op=str(getattr(pick, "op", "?")) if pick is not None else None,
                         module=module if pick is not None else None)
        return module, source, ev

    def decomposed_from(self, graph: int, handle: str | None) -> str | None:
        """The traced op a call site's GEMM node was made from, when that op is no GEMM: Inductor's decomposition
        of ``scaled_dot_product_attention`` into two bmm's (its post-grad ``bmm_default_11`` comes from the traced
        node ``attn_output``). None when it came from a GEMM-class op, or provenance does not say."""
        prov = self.provenance[graph] if graph < len(self.provenance) else None
        site = prov.site(handle) if prov is not None else None
        gemm = self._site_gemm(graph, site) if site is not None else None
        if gemm is None:
            return None
        nodes = self._nodes(graph)
        ops = [str(getattr(nodes[n], "op", "") or "") for n in gemm[1] if n in nodes]
        if not ops or any(vocab.is_gemm(o) for o in ops):
            return None
        return ops[0] or None

    def _by_comment(self, graph: int, source_nodes: Sequence[str]) -> tuple[str, str, Evidence | None]:
        gemms = self._gemm_nodes(graph, source_nodes)
        pick = gemms[-1] if gemms else None
        if pick is None:
            return "", "", None
        module = getattr(pick, "module", None) or ""
        source = getattr(pick, "source", None) or ""
        node = str(getattr(pick, "name", ""))
        if self._stack(graph, node) is not None:
            return module, source, self._caller_evidence(graph, node, pick, source)
        if not module and not source:
            return "", "", None
        ev = Evidence.of(Rule.PROVENANCE_SOURCE_NODE, short_source(source) if source else "",
                         node=str(getattr(pick, "name", "?")), node_op=str(getattr(pick, "op", "?")), module=module,
                         source=source or None)
        return module, source, ev


def _called_by(nodes: dict[str, Any], callers: GraphCallers | None) -> dict[str, Any]:
    """The graph's traced nodes, each one's module its innermost calling module where the callers name it (the
    module whose parameters it reads otherwise)."""
    if callers is None or not nodes:
        return nodes
    out = dict(nodes)
    for name, node in nodes.items():
        module = callers.caller(name)
        if module is not None and module != getattr(node, "module", None):
            out[name] = replace(node, module=module)
    return out


# the node a pattern replacement made (torch/_inductor/fx_passes/mkldnn_fusion.py registers its lowerings as
# ``fn``; FX names its nodes after it: fn, fn_1, ...)
_PATTERN_NODE = re.compile(r"^fn(?:_\d+)?$")


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
