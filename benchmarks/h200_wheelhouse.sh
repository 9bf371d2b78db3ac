#!/usr/bin/env bash
# Fill .whl/parts (git-ignored) for benchmarks/gpu_h200_profile.sh: both toolchains' wheels for the
# H200's Python 3.12, cutediff's own dependencies, and dask/distributed for the remote route, as one
# tar split into PART-sized parts (default 40m: a device call carries at most 64 MiB, the tree ~20 MB). Run here, in the checkout whose
# tree the device tool sends, with cutediff on the path. Needs the network (PyPI).
set -euo pipefail
WH=${WH:-/tmp/h200-wh}
PY="--python-version 3.12 --platform manylinux_2_28_x86_64"
rm -rf "$WH" && mkdir -p "$WH/wh" "$WH/extra"
for V in 4.5.1 4.8.0; do
  "${PYTHON:-python3}" -m cutediff_tui.cli env download "$V" --with flash-attn-4==4.0.0b16 --with quack-kernels==0.4.1 \
      --cuda 13 -d "$WH/wh" $PY
done
# what the image lacks (KINDS.md lists what it has): cutediff's dependencies and the Dask stack
"${PYTHON:-python3}" -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d "$WH/extra" textual textual-plotext rapidfuzz uv platformdirs msgspec filelock \
    nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump dask distributed tornado tblib zict locket partd
rm -rf .whl/parts && mkdir -p .whl/parts
tar cf - -C "$WH" wh extra | split -b "${PART:-40m}" -d - .whl/parts/p
ls -la .whl/parts
