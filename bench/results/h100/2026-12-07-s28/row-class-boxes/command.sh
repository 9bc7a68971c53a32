#!/bin/bash
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd .carry/e1 && xz -dkf tcgemm-bench.xz && chmod +x tcgemm-bench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
for round in 1 2 3; do
  for mode in 0 1 2 3 4; do
    TCGEMM_EXP=$mode timeout 30 ./tcgemm-bench --kernels tcgemm --seed 7 --iters 40 --csv r$round-m$mode.csv > r$round-m$mode.log 2>&1
    echo "round $round mode $mode rc $? $(grep -v '^#' r$round-m$mode.csv | grep tcgemm | cut -d, -f1-12 | tr '\n' ' ')"
  done
done
for mode in 0 1 2 3 4; do
  TCGEMM_EXP=$mode timeout 40 ./tcgemm-bench --kernels tcgemm --seed 7 --iters 20 --m 8192 --n 8192 --k 8192 --csv big-m$mode.csv > big-m$mode.log 2>&1
  echo "8192 mode $mode rc $? $(grep -v '^#' big-m$mode.csv | grep tcgemm | cut -d, -f1-12 | tr '\n' ' ')"
done
head -3 r1-m0.csv; tail -5 r1-m1.log
tar czf $OUT/e1.tar.gz *.csv *.log
