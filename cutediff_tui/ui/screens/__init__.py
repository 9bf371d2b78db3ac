"""Screens of the cutediff TUI (one per module)."""
