"""``python -m cutediff``: the ``cutediff`` command line (the API package itself imports no CLI)."""

from cutediff_tui.cli import main

if __name__ == "__main__":
    main(prog_name="cutediff")
