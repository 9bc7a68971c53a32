#!/bin/bash
# Session 2026-12-05 (10), device run 3: s10g = next/skinny-ring with the
# 16-row kernel back on its register batches (the ring only for 8 rows),
# prepare_skinny split out, the out-of-slice copy address fixed. Tests and
# memcheck, then a same-run A/B against main (s10a) on the small-M shapes,
# then StreamKWidenedTailIsCorrectOnEveryConfig on main if time is left.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && for t in s10a s10g; do tar xJf $t.tar.xz; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > $OUT/gpu.txt
TCGEMM_REQUIRE_GPU=1 timeout 130 s10g/tcgemm_gpu_tests --gtest_filter='ProdSmallM.*:ProdSweep.Every*:BatchInvariance.*:GemmPlanTest.*:DependentLaunch*:GemmApi.*' > $OUT/sk-tests.log 2>&1
echo "sk tests rc $? at $SECONDS s"
TCGEMM_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool memcheck s10g/tcgemm_gpu_tests --gtest_filter='ProdSweep.SanitizerSubset*:ProdSmallM.BlocksLoopOverTheWorkPastTheGrid' > $OUT/sk-memcheck.log 2>&1
echo "sk memcheck rc $? at $SECONDS s"
for r in 1 2; do
  for b in s10a s10g; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192 8192x28672; do
      for m in 1 8 16; do
        timeout 30 $b/tcgemm-bench --m $m --n ${nk%x*} --k ${nk#*x} --kernels tcgemm --iters 40 --seed 7 --csv $b-sk-$m-$nk-r$r.csv > /dev/null 2>&1 || echo "FAIL $b $m $nk"
      done
    done
    echo "$b skinny r$r done at $SECONDS s"
  done
done
tar czf $OUT/ab.tar.gz s10?-*.csv 2>/dev/null
echo "== sk-tests"; grep -E "^\[  PASSED|^\[  FAILED|tests from .* ran" $OUT/sk-tests.log | tail -4
grep -E "ERROR SUMMARY" $OUT/sk-memcheck.log
rest=$((420 - SECONDS))
if [[ $rest -gt 240 ]]; then
  TCGEMM_REQUIRE_GPU=1 timeout $rest s10a/tcgemm_gpu_tests --gtest_filter='ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > $OUT/stream-k-widened.log 2>&1
  echo "widened rc $? at $SECONDS s"; grep -E "OK \]|FAILED" $OUT/stream-k-widened.log | tail -2
else echo "widened skipped ($rest s left)"; fi
