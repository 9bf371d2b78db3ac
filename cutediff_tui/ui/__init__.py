"""The Textual face of cutediff (the only package here that imports Textual).

Import :class:`cutediff_tui.ui.app.CutediffApp` to run it; the modules ``lexers``,
``themes``, ``settings``, ``model`` and ``sources`` are headless and usable without a terminal.
"""
