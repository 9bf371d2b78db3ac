#!/usr/bin/env bash
# The H200 run of the bench acceptance (issue 5), as executed through the device tool.
# Wheel parts arrive one per call in .whl/parts (carried) and are collected in /tmp/parts;
# the last call (STAGE=run) joins them, builds both toolchains from the wheelhouse with no
# network, runs `cutediff bench` and then the standalone CUDA-event script in the same call.
set -euo pipefail
mkdir -p /tmp/parts
cp .whl/parts/p* /tmp/parts/ 2>/dev/null || true
ls -la /tmp/parts
if [ "${STAGE:-copy}" = "check" ]; then
  python3 -c "import sys, torch; print(sys.version, torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"
  PYTHONPATH=$PWD python3 -c "import cutediff_tui.core.bench.worker, cutediff_tui.core.bench.runner as r; print(r.gpu_snapshot())" || true
  nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader
fi
if [ "${STAGE:-copy}" != "run" ]; then exit 0; fi
mkdir -p /tmp/wh && cat /tmp/parts/p* | tar xf - -C /tmp/wh
python3 -m pip install -q --no-index --no-deps --target /tmp/site /tmp/wh/extra/*.whl
export PYTHONPATH="$PWD:/tmp/site" PATH="/tmp/site/bin:$PATH" CUTEDIFF_CACHE_DIR=/tmp/cdc PYTHONUNBUFFERED=1
PINS="--with flash-attn-4==4.0.0b16 --with quack-kernels==0.4.1 --cuda 13"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
for V in 4.5.1 4.8.0; do python3 -m cutediff_tui.cli env create $V $PINS --wheelhouse /tmp/wh/wh; done
set +e
python3 -m cutediff_tui.cli bench 4.5.1 4.8.0 $PINS --kernel fa4-fwdbwd --wheelhouse /tmp/wh/wh \
    ${BENCH_ARGS:-} --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
for V in 4.8.0 4.5.1; do
  SITE=$(ls -d /tmp/cdc/envs/dsl-$V-*/site | head -1)
  python3 benchmarks/fa4_standalone.py "$SITE" 2>&1 | tail -1 | tee "$OUT/standalone-$V.json"
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
