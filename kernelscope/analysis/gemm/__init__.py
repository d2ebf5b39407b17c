"""GEMM epilogue verdicts: which ops after each matrix multiply (or convolution) ran inside its kernel or call.

One step a module:

* ``dataflow.py``  call sites and buffers of a compiled graph: each GEMM's epilogue chain, call site by call site
* ``body.py``      what a kernel computes from each parameter (Triton and Inductor C++ bodies), user-level ops
* ``align.py``     the trace cut into launch groups, and call sites aligned to them
* ``compiled.py``  the compiled path: chains matched to what ran
* ``eager.py``     the eager path: the CPU op tree
* ``trace_only.py`` a compiled trace without its code
* ``library.py``   what a library GEMM call applied itself (bias, _addmm_activation), sizes from the trace
* ``log.py``       AUTOTUNE tables and fusion decisions from the compile log
* ``whynot.py``    why an op was not fused (reason codes, result.py's ``WhyNotReason``)
* ``modules.py``   where a GEMM came from (module path, source line)
* ``summary.py``   identical layers grouped, the cost of unfused epilogues
* ``coverage.py``  the coverage self-check: GEMM-class ops executed vs attributed to a kernel, and against eager
* ``core.py``      the entry point: one iteration's GEMMs checked against the others
The op vocabulary (op classes, backend facts) is ``kernelscope/vocab.py``. Verdicts carry their evidence and
why-not as records (a code of result.py's ``EvidenceRule`` / ``WhyNotReason`` and the facts it names);
report/evidence_words.py writes their sentences.
"""

from kernelscope.analysis.gemm.core import GemmReport, analyze_gemms, gemm_report, sample_iterations
from kernelscope.analysis.gemm.log import AutotuneTable, log_line, parse_log, table_matches
from kernelscope.analysis.gemm.model import GEMM_OPS, short_kernel_name
from kernelscope.analysis.gemm.summary import summarize

__all__ = ["GEMM_OPS", "AutotuneTable", "GemmReport", "analyze_gemms", "gemm_report", "log_line", "parse_log",
           "sample_iterations", "short_kernel_name", "summarize", "table_matches"]
