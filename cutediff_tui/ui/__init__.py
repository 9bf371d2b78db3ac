"""The Textual face of cutediff (the only package here that imports Textual).

Import :class:`cutediff_tui.ui.app.CutediffApp` to run it. The helper modules ``model``,
``lexers``, ``settings`` and ``sources`` are headless (no Textual import), so
thread workers and tests use them without a terminal.
"""
