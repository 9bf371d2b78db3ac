"""Live benchmark: both toolchains on the local GPU, interleaved, with statistics and verdicts."""
