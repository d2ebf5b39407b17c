"""Report templates and inline assets, shipped inside the wheel as ``kernelscope.templates``."""
