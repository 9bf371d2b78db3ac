"""``python -m cutediff_tui``: the same as the ``cutediff`` command."""

from cutediff_tui.cli import main

if __name__ == "__main__":
    main(prog_name="cutediff")
