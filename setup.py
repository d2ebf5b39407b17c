"""The optional C extension (metadata is in pyproject.toml): the streaming trace reader's chunk parser
(kernelscope/_fastread.c).

Optional: without a compiler the install still succeeds; kernelscope.trace then reads with msgspec alone.
"""

from setuptools import Extension, setup

# -O3 for the reader: the chunk parse's CPU ~4% lower than at -O2 on the 1M-event benchmark trace (and the build's
# no higher).
setup(ext_modules=[
    Extension("kernelscope._fastread", ["kernelscope/_fastread.c"], optional=True, extra_compile_args=["-O3"]),
])
