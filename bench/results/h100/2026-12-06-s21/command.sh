#!/bin/bash
# Session 21 (2026-12-06): the device commands, run from the repository root
# as `bash bench/results/h100/2026-12-06-s21/command.sh PART` (written for an
# H200 and run from bench/results/h200/; every call got an H100). Build carried
# (gitignored, nvcc 13.0, sm_90a, Release):
#   .carry/b21.tar.xz  main 4350dfb: tcgemm-bench, tcgemm-tune,
#                      tcgemm-host-overhead, tcgemm_gpu_tests (b21/COMMIT)
# Parts, meant for an H200 in this order (the H200 bars were last measured
# on 2026-12-04/05, before prod-128x96, the small-M ring, the flipped TMA
# store and the removed flip charge):
#   one      re-tune the standard sets into new.json (llm bf16 tn,tnr;
#            squares bf16 tn,tnr and fp16 tn), then the tcgemm row with it:
#            the llm set beside the copy rates, the squares
#   layouts  the eight storage orders at 4096^3 and 8192^3 (bf16; fp16 tn
#            and ttr), the ragged and batched sets, host overhead, the
#            heldout set (new.json from `one` when it is there)
#   check    the GPU suite but the stream-K tail suites, memcheck and
#            racecheck on the sanitizer subsets
#   tails    the stream-K tail suites (every config, plain and widened)
#   ab       the committed table against new.json, one after the other, on
#            the llm set and the squares
#   tune21   every candidate, both orientations, on the heldout set
#            (heldout.json): the picks the removed flip charge moved
#   llmc     the llm set with the committed table alone (ab's llm runs
#            overran their 130 s and wrote nothing; run as its own call)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && { [[ -f b21/tcgemm-bench ]] || tar xJf b21.tar.xz; }
b=b21
t=""; [[ -f new.json ]] && t="--tuned-table new.json"  # the table `one` tuned, once it has
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s21-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu $1
case $1 in
one)
  timeout 220 $b/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  timeout 100 $b/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out new.json >> tune.log 2>&1
  timeout 60 $b/tcgemm-tune --shapes square --dtype fp16 --layouts tn --out new.json >> tune.log 2>&1
  echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack one
  $b/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 150 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table new.json --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  for mib in 1024 16 56 224; do $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1; done
  echo "llm at $SECONDS s"; gpu one; pack one
  timeout $((585 - SECONDS)) $b/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --tuned-table new.json --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s" ;;
layouts)
  for n in 4096 8192; do
    timeout 70 $b/tcgemm-bench --m $n --n $n --k $n --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr --kernels tcgemm --seed 7 $t --csv layouts-bf16-$n.csv > /dev/null 2>&1 || echo "FAIL layouts $n"
    timeout 30 $b/tcgemm-bench --m $n --n $n --k $n --dtype fp16 --layout tn,ttr --kernels tcgemm --seed 7 $t --csv layouts-fp16-$n.csv > /dev/null 2>&1 || echo "FAIL fp16 $n"
  done
  echo "layouts at $SECONDS s"; pack layouts
  timeout 70 $b/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 $t --csv ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
  timeout 40 $b/tcgemm-bench --shapes batched --kernels tcgemm --seed 7 $t --csv batched.csv > /dev/null 2>&1 || echo "FAIL batched"
  timeout 50 $b/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 || echo "FAIL host"
  echo "ragged, batched, host at $SECONDS s"; gpu layouts; pack layouts
  timeout $((585 - SECONDS)) $b/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm --seed 7 $t --csv heldout.csv > /dev/null 2>&1 || echo "FAIL heldout bench"
  echo "heldout at $SECONDS s" ;;
check)
  TCGEMM_REQUIRE_GPU=1 timeout 400 $b/tcgemm_gpu_tests --gtest_filter='-EveryConfig/ProdStreamKTail.*' > gpu-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" gpu-suite.log | tail -8; pack check
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 97 $b/tcgemm_gpu_tests --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool.log | tail -n 3
  done ;;
tails)
  TCGEMM_REQUIRE_GPU=1 timeout 570 $b/tcgemm_gpu_tests --gtest_filter='EveryConfig/ProdStreamKTail.*' > streamk-tails.log 2>&1
  echo "tails rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" streamk-tails.log | tail -8 ;;
ab)
  for tab in committed new committed new; do
    a=""; [[ $tab == new ]] && a="--tuned-table new.json"
    slot=$((${slot:-0} + 1))
    timeout 130 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 $a --csv ab-$slot-llm-$tab.csv > /dev/null 2>&1 || echo "FAIL llm $tab"
    timeout 100 $b/tcgemm-bench --shapes square --layout tn --kernels tcgemm --seed 7 $a --csv ab-$slot-square-$tab.csv > /dev/null 2>&1 || echo "FAIL square $tab"
    echo "ab $slot $tab at $SECONDS s"; pack ab
    (( SECONDS > 330 )) && break
  done ;;
tune21)
  timeout 300 $b/tcgemm-tune --shapes heldout --dtype bf16 --layouts tn,tnr --out heldout.json > tune-heldout.log 2>&1
  echo "tune rc $? at $SECONDS s"; grep -E "heuristic vs" tune-heldout.log | tail -2 ;;
llmc)
  timeout 200 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --csv llm-committed.csv > /dev/null 2>&1
  echo "rc $? at $SECONDS" ;;
esac
gpu $1; pack $1
