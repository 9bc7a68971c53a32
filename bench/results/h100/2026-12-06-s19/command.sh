#!/bin/bash
# Session 19 (2026-12-06): the device commands, run from the repository root
# as `bash bench/results/h100/2026-12-06-s19/command.sh PART` (written
# before the card was known; every call ran on an H100). Builds
# carried (gitignored, nvcc 13.0, sm_90a, Release; each holds its COMMIT):
#   .carry/s19.tar.xz    main fb6ce4f: tcgemm-bench, tcgemm-tune,
#                        tcgemm-host-overhead, tcgemm_gpu_tests
#                        (s19m.tar.xz: its tcgemm-bench alone, to keep a
#                        call's tree under 64 MiB)
#   .carry/s18or.tar.xz  branch exp/one-round-order's kernels (built at
#                        2c721a9 = adb99bd before its rebase): tcgemm-bench,
#                        tcgemm_gpu_tests
#   .carry/s19b.tar.xz   prod-128x96 (fb6ce4f with the new row, before
#                        its commit): tcgemm-bench, tcgemm-tune, tcgemm_gpu_tests
#   .carry/s19c.tar.xz   s19b with the heuristic's rule against narrow
#                        tiles over a larger A (problem.cpp's estimate_covers)
#   .carry/s19f.tar.xz   the session's last main (its COMMIT): tcgemm-bench,
#                        tcgemm_gpu_tests (not run in this session)
# Parts:
#   ab       the tcgemm row of main and of the branch on seven shapes, in the
#            order main, branch, branch, main, twice; then the GPU suite (but
#            the two long stream-K tail tests) on the branch
#   bn96     the heldout set (tn, tnr), tcgemm row of main and of s19b (the
#            heuristic's picks, prod-128x96 among its candidates) in the
#            order main, new, new, main, and prod-128x96 and prod-128x128 by
#            name on tn; 256 x 4096 x 4096 (tn, tnr) and fp16 1024^3 the
#            same way; then the GPU suite (but the two long stream-K tail
#            tests) on s19b
#   bn96c    the same A/B (heldout tn and tnr, the two extra shapes) of main
#            against s19c; memcheck and racecheck on the sanitizer subsets
#            and the stream-K tail tests on s19c
#   verify   (for the next session, unrun) on s19f: the widened stream-K
#            tail test, memcheck and racecheck on the sanitizer subsets (the
#            TMA-store subset new), then the GPU suite but the two long
#            stream-K tail tests
#   one      re-tune llm and squares into new.json; the tcgemm row with the
#            committed table: llm (copy rates beside it) and squares
#   layouts  the eight storage orders at 4096^3 and 8192^3 (bf16; fp16 tn
#            and ttr), the ragged and batched sets, host overhead, memcheck
#            and racecheck on the sanitizer subsets
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && { [[ -f s19/tcgemm-bench ]] || tar xJf s19.tar.xz 2>/dev/null || tar xJf s19m.tar.xz; }
b=s19
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s19-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu $1
# The tcgemm row of each build in the order given (a build twice is two
# runs), on each shape of a comma-separated list: ab_round ROUND SHAPES BUILD...
ab_round() {
  local round=$1 shapes=$2 slot=0 build shape m n k list
  shift 2
  IFS=, read -ra list <<< "$shapes"
  for build in "$@"; do
    slot=$((slot + 1))
    for shape in "${list[@]}"; do
      read -r m n k <<< "$shape"
      timeout 30 $build/tcgemm-bench --m $m --n $n --k $k --kernels tcgemm --seed 7 --csv ab-$round$slot-$build-${m}x${n}x$k.csv > /dev/null 2>&1 || echo "FAIL $build $shape"
    done
  done
}
# The GPU suite (but the two long stream-K tail tests) on a build: suite_on BUILD SECONDS
suite_on() {
  TCGEMM_REQUIRE_GPU=1 timeout $2 $1/tcgemm_gpu_tests --gtest_filter='-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > gpu-suite-$1.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" gpu-suite-$1.log | tail -8
}
shapes="2048 2048 2048,3072 3072 3072,4096 4096 4096,1024 4096 4096,512 4096 14336,64 4096 4096,256 4096 4096"
case $1 in
ab)
  tar xJf s18or.tar.xz
  for round in 1 2; do ab_round $round "$shapes" s19 s18or s18or s19; done
  echo "ab at $SECONDS s"; pack ab
  suite_on s18or $((585 - SECONDS)) ;;
bn96|bn96c)
  new=s19b; [[ $1 == bn96c ]] && new=s19c
  tar xJf $new.tar.xz
  slot=0
  for build in s19 $new $new s19; do
    slot=$((slot + 1))
    timeout 80 $build/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm --seed 7 --csv heldout-$slot-$build.csv > /dev/null 2>&1 || echo "FAIL heldout $build"
    timeout 20 $build/tcgemm-bench --m 256 --n 4096 --k 4096 --layout tn,tnr --kernels tcgemm --seed 7 --csv extra-$slot-$build-256x4096x4096.csv > /dev/null 2>&1 || echo "FAIL 256 $build"
    timeout 20 $build/tcgemm-bench --m 1024 --n 1024 --k 1024 --dtype fp16 --kernels tcgemm --seed 7 --csv extra-$slot-$build-1024-fp16.csv > /dev/null 2>&1 || echo "FAIL 1024 $build"
    echo "heldout $slot at $SECONDS s"
  done
  if [[ $1 == bn96 ]]; then
    timeout 80 s19b/tcgemm-bench --shapes heldout --layout tn --kernels prod-128x96,prod-128x128 --seed 7 --csv heldout-rows.csv > /dev/null 2>&1 || echo "FAIL rows"
    echo "rows at $SECONDS s"; pack bn96
    suite_on s19b $((585 - SECONDS))
  else
    pack bn96c
    for tool in memcheck racecheck; do
      TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 97 s19c/tcgemm_gpu_tests --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool-s19c.log 2>&1
      echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool-s19c.log | tail -n 3
    done
    pack bn96c
    TCGEMM_REQUIRE_GPU=1 timeout $((585 - SECONDS)) s19c/tcgemm_gpu_tests --gtest_filter='ProdChoices.StreamK*' > streamk-s19c.log 2>&1
    echo "stream-K tests rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" streamk-s19c.log | tail -5
  fi ;;
verify)
  tar xJf s19f.tar.xz
  TCGEMM_REQUIRE_GPU=1 timeout 240 s19f/tcgemm_gpu_tests --gtest_filter='ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > widened-s19f.log 2>&1
  echo "widened rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" widened-s19f.log | tail -3; pack verify
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 97 s19f/tcgemm_gpu_tests --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool-s19f.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool-s19f.log | tail -n 3
  done
  pack verify
  suite_on s19f $((585 - SECONDS)) ;;
one)
  timeout 200 $b/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  timeout 80 $b/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out new.json >> tune.log 2>&1
  timeout 50 $b/tcgemm-tune --shapes square --dtype fp16 --layouts tn --out new.json >> tune.log 2>&1
  echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack one
  $b/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 130 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --csv llm-committed.csv > /dev/null 2>&1 || echo "FAIL llm"
  for mib in 1024 16 56 224; do $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1; done
  echo "llm at $SECONDS s"; gpu one; pack one
  timeout $((585 - SECONDS)) $b/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --csv square-committed.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s" ;;
layouts)
  for n in 4096 8192; do
    timeout 70 $b/tcgemm-bench --m $n --n $n --k $n --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr --kernels tcgemm --seed 7 --csv layouts-bf16-$n.csv > /dev/null 2>&1 || echo "FAIL layouts $n"
    timeout 30 $b/tcgemm-bench --m $n --n $n --k $n --dtype fp16 --layout tn,ttr --kernels tcgemm --seed 7 --csv layouts-fp16-$n.csv > /dev/null 2>&1 || echo "FAIL fp16 $n"
  done
  echo "layouts at $SECONDS s"; pack layouts
  timeout 70 $b/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 --csv ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
  timeout 40 $b/tcgemm-bench --shapes batched --kernels tcgemm --seed 7 --csv batched.csv > /dev/null 2>&1 || echo "FAIL batched"
  timeout 50 $b/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 || echo "FAIL host"
  echo "ragged, batched, host at $SECONDS s"; pack layouts
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 97 $b/tcgemm_gpu_tests --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool.log | tail -n 3
  done ;;
esac
gpu $1; pack $1
