"""layerpath: one multi-step edit instruction in, every tool step out as its own layer."""

__version__ = "0.1.0"
