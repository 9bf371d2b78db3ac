"""The terminal tests compile with the fault tests' real DSL 4.8.0 environment, in a fresh build
cache per test (``own_cache``), so that "cold" means cold."""

from faults.conftest import env48, own_cache  # noqa: F401  (fixtures, shared rather than built twice)
