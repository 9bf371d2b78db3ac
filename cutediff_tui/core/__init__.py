"""Headless core of cutediff: toolchains, compiles, analysis, reports.

Nothing under this package may import Textual (enforced by a test).
"""
