"""The optional C extensions (metadata is in pyproject.toml): the streaming trace reader's chunk parser
(kernelscope/_fastread.c) and the analysis' per-launch loops (kernelscope/analysis/_fastan.c).

Optional: without a compiler the install still succeeds; kernelscope.trace then reads with msgspec alone and the
analysis runs its Python loops.
"""

from setuptools import Extension, setup

# -O3 for the reader: the chunk parse's CPU ~4% lower than at -O2 on the 1M-event benchmark trace (and the build's
# no higher).
setup(ext_modules=[
    Extension("kernelscope._fastread", ["kernelscope/_fastread.c"], optional=True, extra_compile_args=["-O3"]),
    Extension("kernelscope.analysis._fastan", ["kernelscope/analysis/_fastan.c"], optional=True,
              extra_compile_args=["-O2"]),
])
