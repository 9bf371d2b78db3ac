#!/usr/bin/env bash
# Issue 20 acceptance on the H200, through the device tool: positive control, negative control,
# per-kernel rows, ncu evidence and the remote (Dask) route, in one call after the copy calls.
#
# Here: benchmarks/h200_wheelhouse.sh fills .whl/parts (PART-sized parts: the tree plus one part must stay under 64 MiB). Then one device call per
# part, back to back (the machine stays warm 30 s), each carrying only that part:
#   mkdir -p .whl/one && ln -f .whl/parts/p00 .whl/one/   (then p01 …; carry [".whl/one"])
#   command: STAGE=copy bash benchmarks/gpu_h200_profile.sh
# then the runs, each one device call (timeout 600; the machine keeps /tmp while warm):
#   STAGE=pos bash benchmarks/gpu_h200_profile.sh      positive control (+ its static compare)
#   STAGE=neg bash benchmarks/gpu_h200_profile.sh      FA4 fwd+bwd SM90 4.5.1 vs 4.8.0, --profile
#   STAGE=aa bash benchmarks/gpu_h200_profile.sh       the A/A control: 4.8.0 on both sides
#   STAGE=remote bash benchmarks/gpu_h200_profile.sh   the same bench through a Dask scheduler
#   STAGE=analysis bash benchmarks/gpu_h200_profile.sh benchmarks/bench_analysis.py on the device's idle
#       CPUs, interleaved with an older tree (OLD: a `git archive` tgz carried in .whl/one as old.tgz)
# Each returns $OUT/STAGE.tgz (JSON results, ncu CSVs, logs) and $OUT/STAGE.log.
set -uo pipefail
mkdir -p /tmp/parts
cp .whl/one/p* /tmp/parts/ 2>/dev/null || true
cp .whl/one/old.tgz /tmp/ 2>/dev/null || true
ls -la /tmp/parts
STAGE=${STAGE:-copy}
[ "$STAGE" = "copy" ] && exit 0
R=/tmp/results/$STAGE; mkdir -p $R
exec > >(tee "$OUT/$STAGE.log") 2>&1
export PYTHONPATH="$PWD:/tmp/site" PATH="/tmp/site/bin:$PATH" CUTEDIFF_CACHE_DIR=/tmp/cdc PYTHONUNBUFFERED=1
PINS="--with flash-attn-4==4.0.0b16 --with quack-kernels==0.4.1 --cuda 13"
CD="python3 -m cutediff_tui.cli"
if [ ! -d /tmp/site ]; then  # first run stage on this machine: unpack and build both toolchains
  mkdir -p /tmp/wh && cat /tmp/parts/p* | tar xf - -C /tmp/wh
  python3 -m pip install -q --no-index --no-deps --target /tmp/site /tmp/wh/extra/*.whl
  for V in 4.5.1 4.8.0; do $CD env create $V $PINS --wheelhouse /tmp/wh/wh; done
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee $R/gpu.txt
case "$STAGE" in
analysis)  # CPU only: this tree vs the older one, alternating, pair case only
  mkdir -p /tmp/old && tar xzf /tmp/old.tgz -C /tmp/old && ln -sfn "$PWD/samples" /tmp/old/samples
  for i in 1 2 3; do
    for T in /tmp/old "$PWD"; do
      (cd $T && PYTHONPATH="$T:/tmp/site" python3 benchmarks/bench_analysis.py --repeat 15 --scales "" \
          --out $R/analysis-$(basename $T)-$i.json | grep -E "^pair|end to end")
    done
  done
  for i in 1 2; do  # TUI start and keystrokes (issue 14's guard), same alternation
    for T in /tmp/old "$PWD"; do
      (cd $T && PYTHONPATH="$T:/tmp/site" timeout 200 python3 benchmarks/bench_tui.py > /dev/null 2>&1;
       cp benchmarks/results/tui.json $R/tui-$(basename $T)-$i.json; tail -c 600 $R/tui-$(basename $T)-$i.json)
    done
  done ;;
pos)  # one toolchain, the register array read at constant vs run-time indices
  time $CD bench 4.8.0 4.8.0 $PINS --kernel samples/recipes/local_array.py --a-param dynamic=false \
      --b-param dynamic=true --profile --profile-dir $R/ncu --json $R/bench.json
  # the spilling variant compiled for sm_90a (static side), then its ncu counts put on its spill sites
  $CD compare 4.8.0 4.8.0 $PINS --kernel samples/recipes/local_array.py --arch sm_90a --param dynamic=true \
      --save $R/compare > /dev/null
  $CD bench 4.8.0 4.8.0 $PINS --kernel samples/recipes/local_array.py --param dynamic=true --rounds 2 \
      --profile --into $R/compare --json $R/bench-into.json ;;
aa)  # the A/A control: one toolchain on both sides, so every verdict should be SAME
  time $CD bench 4.8.0 4.8.0 $PINS --kernel fa4-fwdbwd --rounds 20 --json $R/bench.json ;;
neg)  # FA4 fwd+bwd SM90, 4.5.1 vs 4.8.0: every kernel, ncu on both sides
  time $CD bench 4.5.1 4.8.0 $PINS --kernel fa4-fwdbwd --rounds 20 --profile --profile-dir $R/ncu --json $R/bench.json ;;
remote)  # a scheduler and a GPU worker on this machine, the same bench through --scheduler
  dask scheduler --port 8786 --no-dashboard > $R/scheduler.log 2>&1 &
  sleep 5
  dask worker tcp://127.0.0.1:8786 --nworkers 1 --nthreads 1 --resources GPU=1 --no-dashboard > $R/worker.log 2>&1 &
  sleep 8
  time $CD bench 4.5.1 4.8.0 $PINS --kernel fa4-fwdbwd --scheduler tcp://127.0.0.1:8786 \
      --wheelhouse /tmp/wh/wh --json $R/bench.json ;;
esac
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a $R/gpu.txt
tar czf "$OUT/$STAGE.tgz" -C /tmp/results "$STAGE"
