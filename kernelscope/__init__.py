"""kernelscope: profiler-driven kernel inspection for PyTorch (eager vs torch.compile).

Importing this package (and the trace, analysis and report layers) never imports torch: only
``kernelscope.capture`` and ``kernelscope.modelfile`` do, inside the per-mode subprocess.
"""

__version__ = "0.1.0"
