#!/bin/bash
# Session 13 (2026-12-05): the device commands prepared in session 12, run on
# the H200 in this order: tune, bench, final. Builds carried as
# .carry/*.tar.xz (gitignored; rebuild them if missing: Release, sm_90a,
# `cmake --build --preset release --target tcgemm-bench tcgemm-tune
# tcgemm-host-overhead tcgemm_gpu_tests` and tar the four binaries):
#   s13m = main 1d300e9 (the heuristic scores last-wave splits with C's
#   TMA store),
#   s12p = next/pingpong (the prod-64x256-pp row), s12s = next/skinny16-ring.
#   bash THIS tune     re-tune every standard set on s13m (~170 s) into
#                      .carry/new.json (kept on the warm machine and in $OUT);
#                      prod-64x256-pp timed on mid-size shapes (s12p)
#   bash THIS bench    the tcgemm row with --tuned-table .carry/new.json:
#                      llm tn,tnr beside the copy rate, squares bf16/fp16,
#                      ragged, batched, host overhead (~450 s)
#   bash THIS tests    the GPU suite on s13m; the ping-pong row's tests and
#                      sanitizers on s12p; the small-M tests on s12s
#   bash THIS skinny   M = 1, 8, 12, 16 on the five llm weights, s12s and
#                      s13m alternating, two rounds
#   bash THIS heldout  the heldout set (problems no tuned table holds): the
#                      tuner's report there is the heuristic against the best
#                      candidate out of sample; the tcgemm row against cuBLAS
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
cd .carry && for t in s13m s12p s12s; do [[ -d $t ]] || tar xJf $t.tar.xz; done
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu.txt; }
pack() { tar czf $OUT/s13-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu
case $1 in
tune)
  # A fresh file: every problem timed with the one-method sampling.
  timeout 300 s13m/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  timeout 120 s13m/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out new.json >> tune.log 2>&1
  timeout 60 s13m/tcgemm-tune --shapes square --dtype fp16 --layouts tn --out new.json >> tune.log 2>&1
  echo "tune at $SECONDS s"; pack tune
  # The ping-pong row against the rest where its tile should matter: M of
  # 256 to 2048 on the llm weights, squares 1024 to 4096.
  [[ $SECONDS -lt 440 ]] && timeout $((570 - SECONDS)) s12p/tcgemm-tune --shape 512x4096x4096,1024x4096x4096,512x14336x4096,1024x14336x4096,512x4096x14336,1024x4096x14336,512x28672x8192,256x8192x28672,1024x1024x1024,2048x2048x2048,3072x3072x3072,4096x4096x4096 --layouts tn --out pp.json > pp-tune.log 2>&1
  echo "pp tune at $SECONDS s"; pack tune
  grep -E "heuristic vs|^\[" tune.log | tail -4; grep -c "prod-64x256-pp" pp.json ;;
bench)
  t="--tuned-table new.json"
  s13m/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 170 s13m/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 $t --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  s13m/tcgemm-host-overhead --copy-rate 1024 >> copy-rate.txt 2>&1
  echo "llm at $SECONDS s"; pack bench
  timeout 110 s13m/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 $t --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s"; pack bench
  timeout 60 s13m/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 $t --csv ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
  timeout 40 s13m/tcgemm-bench --shapes batched --kernels tcgemm --seed 7 $t --csv batched.csv > /dev/null 2>&1 || echo "FAIL batched"
  timeout 50 s13m/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 || echo "FAIL host"
  # Per-CTA timelines (tr2: bench/results/h200/2026-12-05-s11/, its patches
  # on 21d5cdc's kernel), where time is left.
  if [[ $SECONDS -lt 520 ]]; then
    [[ -d tr2 ]] || tar xJf tr2.tar.xz
    for n in 2048 3072 4096; do echo "== M=N=K=$n"; timeout 20 tr2/trace-driver $n $n $n 20; done > trace.txt 2>&1
  fi
  gpu; pack bench; echo "all at $SECONDS s"; tail -3 copy-rate.txt host-overhead.txt ;;
tests)
  TCGEMM_REQUIRE_GPU=1 timeout 280 s13m/tcgemm_gpu_tests --gtest_filter='-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > main-gpu-suite.log 2>&1
  echo "main suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" main-gpu-suite.log | tail -5; pack tests
  TCGEMM_REQUIRE_GPU=1 timeout 100 s12p/tcgemm_gpu_tests --gtest_filter='ProdChoices.PingPong*:ProdChoices.EveryConfigAndKSplitIsCorrect*:ProdChoices.StagedEpilogue*:ProdChoices.SplitOfTheLastWaveNeedsTheInPlaceFixup:*prod_64x256_pp*' > pp-tests.log 2>&1
  echo "pp tests rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" pp-tests.log | tail -5
  for tool in racecheck synccheck memcheck; do
    TCGEMM_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool $tool s12p/tcgemm_gpu_tests --gtest_filter='ProdChoices.StagedEpilogueSanitizerSubset' > pp-$tool.log 2>&1
    echo "pp $tool rc $? at $SECONDS s"; grep "SUMMARY" pp-$tool.log | tail -1
  done
  TCGEMM_REQUIRE_GPU=1 timeout 90 compute-sanitizer --tool memcheck s12p/tcgemm_gpu_tests --gtest_filter='ProdChoices.PingPong*' > pp-memcheck-turns.log 2>&1
  echo "pp memcheck (turns) rc $? at $SECONDS s"; grep "SUMMARY" pp-memcheck-turns.log | tail -1
  pack tests
  TCGEMM_REQUIRE_GPU=1 timeout 60 s12s/tcgemm_gpu_tests --gtest_filter='ProdSmallM.*' > sk-tests.log 2>&1
  echo "skinny tests rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED" sk-tests.log | tail -2
  TCGEMM_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool racecheck s12s/tcgemm_gpu_tests --gtest_filter='ProdSmallM.BlocksLoopOverTheWorkPastTheGrid:ProdSmallM.ARaggedLastSliceZeroFillsReusedSlots' > sk-racecheck.log 2>&1
  echo "skinny racecheck rc $? at $SECONDS s"; grep "SUMMARY" sk-racecheck.log | tail -1
  pack tests ;;
skinny)
  for r in 1 2; do
    for b in s12s s13m; do
      for nk in 4096x4096 14336x4096 4096x14336 28672x8192 8192x28672; do
        for m in 1 8 12 16; do
          timeout 30 $b/tcgemm-bench --m $m --n ${nk%x*} --k ${nk#*x} --kernels tcgemm,prod-skinny --iters 40 --seed 7 --csv $b-sk-$m-$nk-r$r.csv > /dev/null 2>&1 || echo "FAIL $b $m $nk"
        done
      done
      echo "$b r$r at $SECONDS s"; pack skinny
      [[ $SECONDS -lt 540 ]] || break 2
    done
  done ;;
one)
  # Everything of tune and bench that one 600-second command holds, for a
  # session that may get one machine once: the re-tuned table (llm, squares)
  # and the tcgemm row against cuBLAS with it on the llm set and squares.
  timeout 200 s13m/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  timeout 80 s13m/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out new.json >> tune.log 2>&1
  timeout 50 s13m/tcgemm-tune --shapes square --dtype fp16 --layouts tn --out new.json >> tune.log 2>&1
  echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack one
  s13m/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 150 s13m/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table new.json --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  s13m/tcgemm-host-overhead --copy-rate 1024 >> copy-rate.txt 2>&1
  echo "llm at $SECONDS s"; gpu; pack one
  timeout $((585 - SECONDS)) s13m/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --tuned-table new.json --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s" ;;
final)
  # The GPU suite on main (the Python package of this tree building on the
  # CPUs meanwhile), pytest, then the tcgemm row on the heldout set (no
  # tuned table holds it: the heuristic's choices) against cuBLAS.
  ( t0=$SECONDS; CMAKE_BUILD_PARALLEL_LEVEL=14 python3 -m pip install --disable-pip-version-check \
      --no-build-isolation --no-deps --target /tmp/site -Cbuild-dir=/tmp/pybuild "$repo" > pip.log 2>&1
    echo "pip rc $? in $((SECONDS - t0)) s" >> pip.log ) &
  pip_pid=$!
  TCGEMM_REQUIRE_GPU=1 timeout 300 s13m/tcgemm_gpu_tests --gtest_filter='-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > main-gpu-suite.log 2>&1
  echo "main suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" main-gpu-suite.log | tail -5; pack final
  wait $pip_pid; tail -1 pip.log
  (cd "$repo" && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 120 python3 -m pytest -p no:cacheprovider -ra -q python/tests > "$repo/.carry/pytest.log" 2>&1; echo "pytest rc $? at $SECONDS s"); tail -3 pytest.log; pack final
  timeout $((580 - SECONDS)) s13m/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm --seed 7 --csv heldout.csv > /dev/null 2>&1 || echo "FAIL heldout bench"
  echo "heldout bench at $SECONDS s" ;;
heldout)
  timeout 280 s13m/tcgemm-tune --shapes heldout --dtype bf16 --layouts tn,tnr --out heldout.json > heldout-tune.log 2>&1
  echo "heldout tune at $SECONDS s"; pack heldout
  timeout 200 s13m/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm --seed 7 --csv heldout.csv > /dev/null 2>&1 || echo "FAIL heldout bench"
  echo "heldout bench at $SECONDS s"; grep "heuristic vs" heldout-tune.log ;;
esac
gpu; pack $1
