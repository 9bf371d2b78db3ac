"""Headless analysis engine: parse, classify, align and cross-check compiled kernels.

Modules (import them directly; nothing is imported eagerly here):

* :mod:`.tools` - find and run nvdisasm / cuobjdump / ptxas.
* :mod:`.sass` - parse nvdisasm listings (``-c``, ``-g``, ``-lrm count``).
* :mod:`.ptx` - parse PTX modules.
* :mod:`.ptxas_log` / :mod:`.resource_usage` - ``ptxas -v`` and cuobjdump resource figures.
* :mod:`.fingerprint` - toolchain and architecture of PTX and cubins.
* :mod:`.classes` - opcode classes (data in ``cutediff_tui/data/opcode_classes.toml``).
* :mod:`.spills` / :mod:`.cfg` - spill sites, widths and loops.
* :mod:`.pressure` - live-register pressure.
* :mod:`.align` - rename-aware SASS / PTX alignment.
* :mod:`.crosscheck` - ptxas version matrix.
* :mod:`.memory` - memory operations by address space and width (SASS and PTX).
* :mod:`.budgets` - register budgets (``setmaxnreg``/``USETMAXREG``) with warp roles, launch bounds.
* :mod:`.ptx_facts` - PTX ``.local`` depot, register declarations, ranked opcode deltas.
"""
