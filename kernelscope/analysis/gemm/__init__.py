"""GEMM epilogue verdicts, one step a module (see each module's docstring)."""

from kernelscope.analysis.gemm.core import (  # noqa: F401
    _ANSI,
    _LOG_PREFIX,
    GEMM_OPS,
    AutotuneTable,
    GemmReport,
    analyze_gemms,
    gemm_report,
    parse_log,
    sample_iterations,
    short_kernel_name,
    summarize,
    table_matches,
)
