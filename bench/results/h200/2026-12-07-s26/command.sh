#!/bin/bash
# Prepared in session 26 (2026-12-07) for the next H200 call; nothing here
# has run (README.md). Run from the repository root as
# `bash bench/results/h200/2026-12-07-s26/command.sh PART`. Build carried
# (gitignored, nvcc 13.0, sm_90a, Release; `tar cf - DIR | xz -T2 -6`):
#   .carry/b28.tar.xz  main at 26ffda2 (b28/COMMIT; later commits change
#                      comments, host tests, docs, results and the probe
#                      tools/probes/copy_engine.cu only):
#                      tcgemm-bench, tcgemm-tune, tcgemm-host-overhead,
#                      tcgemm_gpu_tests
# Parts, in the order they should run (each packs its files as it goes):
#   bars     the issues' H200 bars with the embedded table (about 350 s):
#            copy rates, the llm set (tn, tnr), bf16 squares, the ragged set
#   heldout  every candidate on the heldout set, then the tcgemm row there
#            beside cuBLAS (about 250 s): the H200's first out-of-sample
#            candidate timings, for the heuristic
#   layouts  the eight storage orders at 4096^3 and 8192^3 (bf16; fp16 tn,
#            ttr), the batched set, host overhead (about 200 s)
#   suite    the GPU suite but the stream-K tail suites, then memcheck and
#            racecheck on the sanitizer subsets (about 260 s)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry || exit 1
[[ -f b28/tcgemm-bench ]] || tar xJf b28.tar.xz
b=b28
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s26-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
# within T: the seconds left before T s into the part, at least 1
within() { local left=$(($1 - SECONDS)); echo $((left > 1 ? left : 1)); }
bench() {  # bench NAME SECONDS ARGS...: tcgemm-bench's tcgemm row into NAME.csv
  local name=$1 seconds=$2; shift 2
  timeout $seconds $b/tcgemm-bench --kernels tcgemm --seed 7 --csv $name.csv "$@" > $name.log 2>&1 \
    || echo "FAIL $name ($?)"
  echo "$name at $SECONDS s"
}
gpu $1
case $1 in
bars)
  for mib in 1024 16 56 224; do
    timeout 30 $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1 || echo "FAIL copy rate $mib"
  done
  bench llm 170 --shapes llm --layout tn,tnr; pack bars
  bench square 100 --shapes square --layout tn --dtype bf16; pack bars
  bench ragged $(within 380) --shapes ragged ;;
heldout)
  rm -f heldout.json
  timeout 120 $b/tcgemm-tune --shapes heldout --dtype bf16 --layouts tn,tnr --out heldout.json > tune-heldout.log 2>&1
  echo "tune rc $? at $SECONDS s"; grep -E "heuristic vs" tune-heldout.log | tail -1; pack heldout
  bench heldout $(within 540) --shapes heldout --layout tn,tnr ;;
layouts)
  for n in 4096 8192; do
    bench layouts-bf16-$n 70 --m $n --n $n --k $n --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr
    bench layouts-fp16-$n 30 --m $n --n $n --k $n --dtype fp16 --layout tn,ttr
  done
  pack layouts
  bench batched 40 --shapes batched
  timeout 50 $b/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 \
    || echo "FAIL host overhead" ;;
suite)
  TCGEMM_REQUIRE_GPU=1 timeout 300 $b/tcgemm_gpu_tests --gtest_filter='-EveryConfig/ProdStreamKTail.*' > gpu-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" gpu-suite.log | tail -8; pack suite
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 97 $b/tcgemm_gpu_tests \
      --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool.log | tail -n 3
  done ;;
*) echo "usage: command.sh bars|heldout|layouts|suite" >&2; exit 2 ;;
esac
gpu $1; pack $1
