#!/bin/bash
# Session 12 (2026-12-05) on an H100 (the H200s were not lent): the chained
# GEMM test's new premise and the plan tests, then a tuned table for this
# GPU (the standard sets, with the one-method sampling), the llm set's
# tcgemm row against cuBLAS with that table (tcgemm-bench --tuned-table)
# beside the copy rate, and the heldout set's table (the heuristic out of
# sample). Builds: .carry/s12m (main c9fd90f), s12t (its GPU tests with the
# M = 32 chain case).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && for t in s12m s12t; do [[ -d $t ]] || tar xJf $t.tar.xz; done
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu.txt; }
pack() { tar czf $OUT/h100-s12.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu
TCGEMM_REQUIRE_GPU=1 timeout 60 s12t/tcgemm_gpu_tests --gtest_filter='DependentLaunch.*:GemmPlanTest.*' > dep-plan-tests.log 2>&1
echo "dep/plan rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" dep-plan-tests.log | tail -3
T=nvidia-h100.json
timeout 200 s12m/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out $T > tune.log 2>&1
timeout 80 s12m/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out $T >> tune.log 2>&1
echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack
s12m/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
timeout 150 s12m/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table $T --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
s12m/tcgemm-host-overhead --copy-rate 1024 >> copy-rate.txt 2>&1
echo "llm at $SECONDS s"; gpu; pack
if [[ $SECONDS -lt 470 ]]; then
  timeout $((560 - SECONDS)) s12m/tcgemm-tune --shapes heldout --dtype bf16 --layouts tn --out heldout.json > heldout-tune.log 2>&1
  echo "heldout at $SECONDS s"; grep "heuristic vs" heldout-tune.log
fi
gpu; pack
