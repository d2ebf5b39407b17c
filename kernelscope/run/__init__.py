"""A run of a model file: the capture workers of every mode (per shape point, per side of an upgrade) started in
order, each mode analysed as soon as nothing more runs for it, result.json kept current. The layer between the
commands and capture, analysis and the reports: profile.py and upgrade.py are what ``kernelscope profile`` and
``kernelscope upgrade-check`` run."""
