"""cutediff: compare CuTe DSL kernels across toolchains."""

__version__ = "0.1.0"
