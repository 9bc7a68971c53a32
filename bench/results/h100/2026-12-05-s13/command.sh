#!/bin/bash
# Session 13 on an H100 80GB HBM3 (no H200 came): the two branches' open
# questions, each a same-run comparison on one card.
#   1. next/pingpong (build .carry/s12p = 671951e): tcgemm-tune times the
#      ping-pong row prod-64x256-pp against every other candidate on
#      mid-size problems, where its epilogue overlap should matter most.
#   2. next/skinny16-ring (.carry/s12s = 3b08663) against main (.carry/s13m
#      = 1d300e9): the small-M path (prod-skinny) and the tcgemm row at
#      M = 1, 8, 12, 16 on the llm set's five weights, builds alternating.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && for t in s12p s12s s13m; do [[ -d $t ]] || tar xJf $t.tar.xz; done
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu.txt; }
pack() { tar czf $OUT/h100-s13.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu
timeout 220 s12p/tcgemm-tune --shape 512x4096x4096,1024x4096x4096,512x14336x4096,1024x14336x4096,512x4096x14336,1024x4096x14336,512x28672x8192,256x8192x28672,1024x1024x1024,2048x2048x2048,3072x3072x3072,4096x4096x4096 --layouts tn --out pp.json > pp-tune.log 2>&1
echo "pp tune rc $? at $SECONDS s"; grep -c '"prod-64x256-pp"' pp.json; pack
for r in 1 2; do
  for b in s12s s13m; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192 8192x28672; do
      for m in 1 8 12 16; do
        timeout 30 $b/tcgemm-bench --m $m --n ${nk%x*} --k ${nk#*x} --kernels tcgemm,prod-skinny --iters 40 --seed 7 --csv $b-sk-$m-$nk-r$r.csv > /dev/null 2>&1 || echo "FAIL $b $m $nk"
      done
    done
    echo "$b r$r at $SECONDS s"; pack
    [[ $SECONDS -lt 500 ]] || break 2
  done
done
gpu; pack
