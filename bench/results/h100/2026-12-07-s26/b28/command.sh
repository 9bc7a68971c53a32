#!/bin/bash
# Session 26 (2026-12-07): one device call, run from the repository root as
# `bash bench/results/h100/2026-12-07-s26/b28/command.sh [SECONDS]`, on whichever
# card is lent (the README says which ran). Builds carried (gitignored, nvcc
# 13.0, sm_90a, Release; packed with `tar cf - DIR | xz -T2 -6`):
#   .carry/b26.tar.xz  main at 08c36fb, before the merge of exp/skinny-balance
#   .carry/b28.tar.xz  main with it and with prod-192x192 estimated
#                      (b28/COMMIT): tcgemm-bench, tcgemm-tune,
#                      tcgemm-host-overhead, tcgemm_gpu_tests
# In order, each step's files packed as it ends, each step capped by what is
# left of SECONDS (330 if not given):
#   1. ab       b28 against b26: the tcgemm row at M = 8 against the heldout
#               set's six weights (tn, tnr), builds alternating, four rounds,
#               then scripts/bench-ab
#   2. tests    b28's GPU tests of what changed: the small-M path, the
#               sampled sweep, the batch-invariant mode, every problem class
#               and plans (the heuristic now picks prod-192x192 too)
#   3. probe    .carry/ce/tcgemm-ce-probe (this tree's tools/probes/
#               copy_engine.cu): the repack by copy engine, with controls
#   4. tune     every candidate on the heldout set (bf16 tn, tnr) with b28
#   5. heldout  the tcgemm row on the heldout set with b28, beside cuBLAS
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
limit=${1:-330}
cd .carry || exit 1
for b in b26 b28; do [[ -f $b/tcgemm-bench ]] || tar xJf $b.tar.xz; done
rm -f ab-*.csv heldout.json heldout.csv  # a warm machine's earlier files
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu.txt; }
pack() { tar czf $OUT/s26.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
# cap N: N seconds, or what is left of the limit if that is less (at least 1)
cap() { local left=$((limit - SECONDS)); (( left < $1 )) && echo $((left > 1 ? left : 1)) || echo $1; }
gpu
for round in 1 2 3 4; do
  for side in b26 b28; do
    for nk in 5120x5120 6144x4096 5120x13824 13824x5120 10240x8192 18944x3584; do
      timeout 60 $side/tcgemm-bench --m 8 --n ${nk%x*} --k ${nk#*x} --layout tn,tnr --kernels tcgemm \
        --seed 7 --csv ab-$round-$side-$nk.csv > /dev/null 2>&1 || echo "FAIL $side $nk round $round"
    done
  done
done
python3 "$repo/scripts/bench-ab" --a ab-*-b26-*.csv --b ab-*-b28-*.csv > bench-ab.txt 2>&1
echo "1. ab rc $? at $SECONDS s"; tail -n 2 bench-ab.txt; pack
TCGEMM_REQUIRE_GPU=1 timeout $(cap 150) b28/tcgemm_gpu_tests \
  --gtest_filter='ProdSmallM.*:ProdSweep.*:BatchInvariance.*:ProdClasses.*:GemmPlanTest.*' > tests.log 2>&1
echo "2. tests rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" tests.log | tail -6; pack
timeout $(cap 30) ce/tcgemm-ce-probe > ce-probe.txt 2>&1
echo "3. probe rc $? at $SECONDS s"; grep -E "^(1-D copy|2-D repack):" ce-probe.txt; pack
timeout $(cap 100) b28/tcgemm-tune --shapes heldout --dtype bf16 --layouts tn,tnr --out heldout.json > tune-heldout.log 2>&1
echo "4. tune rc $? at $SECONDS s"; grep -E "heuristic vs" tune-heldout.log | tail -1; gpu; pack
if (( limit - SECONDS > 30 )); then
  timeout $(cap 300) b28/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm \
    --seed 7 --csv heldout.csv > bench-heldout.log 2>&1
  echo "5. heldout rc $? at $SECONDS s"
else
  echo "5. heldout skipped at $SECONDS s"
fi
gpu; pack
