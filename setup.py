"""The optional C extensions (metadata is in pyproject.toml): the streaming trace reader's chunk parser
(kernelscope/_fastread.c) and the analysis' per-launch loops (kernelscope/analysis/_fastan.c).

Optional: without a compiler the install still succeeds; kernelscope.trace then reads with msgspec alone and the
analysis runs its Python loops.
"""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("kernelscope._fastread", ["kernelscope/_fastread.c"], optional=True, extra_compile_args=["-O2"]),
    Extension("kernelscope.analysis._fastan", ["kernelscope/analysis/_fastan.c"], optional=True,
              extra_compile_args=["-O2"]),
])
