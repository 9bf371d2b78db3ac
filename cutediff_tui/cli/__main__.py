"""``python -m cutediff_tui.cli``: the same as the ``cutediff`` command."""

from . import main

main()
