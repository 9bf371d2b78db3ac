#!/usr/bin/env bash
# Regenerates samples/raw/: the FA4 forward kernel's PTX and cubin (plain and line-info builds) for
# sm_103a under DSL 4.5.1 and 4.8.0, compiled by cutediff. Tests and benchmarks read these flat files.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
cutediff compare 4.5.1 4.8.0 --with flash-attn-4==4.0.0b16 --with quack-kernels==0.4.1 \
    --kernel fa4-fwd --arch sm_103a --varlen --causal --hdim 128 --save "$tmp" -q > /dev/null
for side in a b; do
  v=$([ $side = a ] && echo 4.5.1 || echo 4.8.0)
  for kind in "" "-lineinfo"; do
    dst=samples/raw/fa4-fwd-sm103a-$v$kind
    rm -rf "$dst" && mkdir -p "$dst"
    cp "$tmp/$side/000$kind/kernel.cubin" "$dst/kernel.cubin"
    gzip -dc "$tmp/$side/000$kind/kernel.ptx.gz" > "$dst/kernel.ptx"
  done
done
rm -rf "$tmp"
ls -l samples/raw/*
