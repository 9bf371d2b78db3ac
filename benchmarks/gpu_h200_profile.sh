#!/usr/bin/env bash
# Issue 20 acceptance on the H200, through the device tool: positive control, negative control,
# per-kernel rows, ncu evidence and the remote (Dask) route, in one call after the copy calls.
#
# Here: benchmarks/h200_wheelhouse.sh fills .whl/parts (55 MB parts). Then one device call per
# part, back to back (the machine stays warm 30 s), each carrying only that part:
#   mkdir -p .whl/one && ln -f .whl/parts/p00 .whl/one/   (then p01 …; carry [".whl/one"])
#   command: STAGE=copy bash benchmarks/gpu_h200_profile.sh
# and last: STAGE=run bash benchmarks/gpu_h200_profile.sh (carry nothing, timeout 600). What comes
# back is $OUT/h200-profile.tgz (results and ncu CSVs) and $OUT/run.log.
set -uo pipefail
mkdir -p /tmp/parts
cp .whl/one/p* /tmp/parts/ 2>/dev/null || true
ls -la /tmp/parts
[ "${STAGE:-copy}" = "run" ] || exit 0
R=/tmp/results; mkdir -p $R
exec > >(tee "$OUT/run.log") 2>&1
mkdir -p /tmp/wh && cat /tmp/parts/p* | tar xf - -C /tmp/wh
python3 -m pip install -q --no-index --no-deps --target /tmp/site /tmp/wh/extra/*.whl
export PYTHONPATH="$PWD:/tmp/site" PATH="/tmp/site/bin:$PATH" CUTEDIFF_CACHE_DIR=/tmp/cdc PYTHONUNBUFFERED=1
PINS="--with flash-attn-4==4.0.0b16 --with quack-kernels==0.4.1 --cuda 13"
CD="python3 -m cutediff_tui.cli"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $R/gpu.txt
for V in 4.5.1 4.8.0; do $CD env create $V $PINS --wheelhouse /tmp/wh/wh; done
# 1. positive control: one toolchain, the register array read at constant vs run-time indices
time $CD bench 4.8.0 4.8.0 $PINS --kernel samples/recipes/local_array.py --a-param dynamic=false \
    --b-param dynamic=true --profile --profile-dir $R/positive-ncu --json $R/positive.json
# the same kernels compiled for sm_90a with line info (static side, for the aligned listing)
$CD compare 4.8.0 4.8.0 $PINS --kernel samples/recipes/local_array.py --arch sm_90a --param dynamic=true \
    --json $R/positive-compare.json > /dev/null
# 2. negative control: FA4 fwd+bwd SM90, 4.5.1 vs 4.8.0, every kernel, ncu on both sides
time $CD bench 4.5.1 4.8.0 $PINS --kernel fa4-fwdbwd --profile --profile-dir $R/negative-ncu \
    --json $R/negative.json
# 3. remote route: a scheduler and a GPU worker on this machine, the same bench through --scheduler
dask scheduler --port 8786 --no-dashboard > $R/scheduler.log 2>&1 &
sleep 5
dask worker tcp://127.0.0.1:8786 --nworkers 1 --nthreads 1 --resources GPU=1 --no-dashboard > $R/worker.log 2>&1 &
sleep 8
time $CD bench 4.5.1 4.8.0 $PINS --kernel fa4-fwdbwd --scheduler tcp://127.0.0.1:8786 \
    --wheelhouse /tmp/wh/wh --json $R/remote.json
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a $R/gpu.txt
tar czf "$OUT/h200-profile.tgz" -C /tmp results
