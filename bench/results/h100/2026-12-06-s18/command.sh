#!/bin/bash
# Session 18 (2026-12-06): the device commands (run from
# bench/results/h200/2026-12-06-s18/, on H100s). Build carried:
# .carry/s18.tar.xz (gitignored) = main's tcgemm-bench, tcgemm-tune,
# tcgemm-host-overhead and tcgemm_gpu_tests (nvcc 13.0, sm_90a, Release;
# the commit in s18/COMMIT). Runs on whichever card the device gives; the
# results folder says which.
#   bash THIS suite    the GPU suite (all but the two long stream-K tail
#                      tests), the Python package built meanwhile, pytest
#                      with a GPU required, `python -m tcgemm.bench` (its
#                      exact check) on the squares and a few llm shapes
#   bash THIS one      re-tune llm and squares into new.json, then the
#                      tcgemm row against cuBLAS with the committed table and
#                      with new.json (llm beside copy rates; squares)
#   bash THIS ab       the producer's first item found under the cluster
#                      barrier (.carry/s18h.tar.xz: tcgemm-bench, the GPU
#                      tests and tcgemm-trace, a build whose bf16 instances
#                      record a per-CTA timeline) against main's build:
#                      the timeline at 2048^3, 3072^3, 4096^3 and 512 x 4096
#                      x 14336, then the tcgemm row in the order main, new,
#                      new, main on six shapes, then the GPU suite on the
#                      new build
#   bash THIS ab2      the same A/B with the schedule's divisions moved under
#                      the barrier too (.carry/s18v.tar.xz): main, s18h,
#                      s18v, s18v, s18h, main; the GPU suite on s18v
#   bash THIS ab3      the CTA leaving after its last TMA store's reads, not
#                      its writes (.carry/s18w.tar.xz) against s18v: s18v,
#                      s18w, s18w, s18v twice; the GPU suite on s18w
#   bash THIS layouts  the eight storage orders at 4096^3 and 8192^3 (bf16;
#                      fp16 tn and ttr), ragged and batched sets, host
#                      overhead, memcheck / racecheck on the sanitizer subsets
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
cd .carry && { [[ -f s18/tcgemm-bench ]] || tar xJf s18.tar.xz; }
b=s18
t=""; [[ -f new.json ]] && t="--tuned-table new.json"
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s18-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
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
shapes="2048 2048 2048,3072 3072 3072,4096 4096 4096,1024 4096 4096,512 4096 14336,64 4096 4096"
case $1 in
suite)
  ( t0=$SECONDS; CMAKE_BUILD_PARALLEL_LEVEL=12 python3 -m pip install --disable-pip-version-check \
      --no-build-isolation --no-deps --target /tmp/site -Cbuild-dir=/tmp/pybuild "$repo" > pip.log 2>&1
    echo "pip rc $? in $((SECONDS - t0)) s" >> pip.log ) &
  pip_pid=$!
  TCGEMM_REQUIRE_GPU=1 timeout 330 $b/tcgemm_gpu_tests --gtest_filter='-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > gpu-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" gpu-suite.log | tail -8; pack suite
  wait $pip_pid; tail -n 1 pip.log
  (cd "$repo" && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 120 python3 -m pytest -p no:cacheprovider -ra -q python/tests > "$repo/.carry/pytest.log" 2>&1; echo "pytest rc $? at $SECONDS s"); tail -n 3 pytest.log; pack suite
  (cd "$repo" && PYTHONPATH=/tmp/site timeout $((590 - SECONDS)) python3 -m tcgemm.bench --shapes squares,llm --tokens 1,16,4096 --dtype bf16 --csv "$repo/.carry/python-bench.csv" > "$repo/.carry/python-bench.txt" 2>&1; echo "python bench rc $? at $SECONDS s"); tail -n 30 python-bench.txt ;;
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
ab)
  tar xJf s18h.tar.xz
  for shape in "2048 2048 2048" "3072 3072 3072" "4096 4096 4096" "512 4096 14336"; do
    timeout 30 s18h/tcgemm-trace $shape >> trace.txt 2>&1 || echo "FAIL trace $shape"
  done
  echo "trace at $SECONDS s"; pack ab
  for round in 1 2; do
    ab_round $round "$shapes" s18 s18h s18h s18
    [[ $SECONDS -gt 200 ]] && break
  done
  echo "ab at $SECONDS s"; pack ab
  suite_on s18h $((580 - SECONDS)) ;;
ab2)
  tar xJf s18h.tar.xz; tar xJf s18v.tar.xz
  for round in 1 2; do ab_round $round "$shapes,20 2048 2048" s18 s18h s18v s18v s18h s18; done
  echo "ab at $SECONDS s"; pack ab2
  suite_on s18v $((580 - SECONDS)); pack ab2
  TCGEMM_REQUIRE_GPU=1 timeout $((590 - SECONDS)) s18v/tcgemm_gpu_tests --gtest_filter='ProdChoices.StreamKTailIsCorrectOnEveryConfig' > streamk-tail-s18v.log 2>&1
  echo "stream-K tail rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" streamk-tail-s18v.log | tail -3 ;;
ab3)
  tar xJf s18v.tar.xz; tar xJf s18w.tar.xz
  for round in 1 2; do ab_round $round "$shapes,256 4096 4096" s18v s18w s18w s18v; done
  echo "ab at $SECONDS s"; pack ab3
  suite_on s18w $((400 - SECONDS)) ;;
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
