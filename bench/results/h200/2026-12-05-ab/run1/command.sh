#!/bin/bash
# Session 2026-12-05 (10), device run 2 (one command for what is left of the
# session's device time). s10a = main 6043d14; s10b = next/first-tile c40c22d;
# s10d = next/skinny-ring a5199f7. The Python package (main's tree) builds on
# the CPUs while the branches' GPU tests run; then pytest; then same-run A/B
# benches, each only if time is left.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
export CMAKE_BUILD_PARALLEL_LEVEL=14
repo=$PWD
cd .carry && for t in s10a s10b s10d; do tar xJf $t.tar.xz; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > $OUT/gpu.txt
( t0=$SECONDS; python3 -m pip install --disable-pip-version-check --no-build-isolation --no-deps \
    --target /tmp/site -Cbuild-dir=/tmp/pybuild "$repo" > /tmp/pip.log 2>&1; echo "pip rc $? in $((SECONDS - t0)) s" >> /tmp/pip.log ) &
pip_pid=$!
TCGEMM_REQUIRE_GPU=1 timeout 110 s10d/tcgemm_gpu_tests --gtest_filter='ProdSmallM.*:ProdSweep.Every*:BatchInvariance.*' > $OUT/sk-tests.log 2>&1
echo "sk tests rc $? at $SECONDS s"
TCGEMM_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool memcheck s10d/tcgemm_gpu_tests --gtest_filter='ProdSweep.SanitizerSubset*' > $OUT/sk-memcheck.log 2>&1
echo "sk memcheck rc $? at $SECONDS s"
TCGEMM_REQUIRE_GPU=1 timeout 100 s10b/tcgemm_gpu_tests --gtest_filter='ProdSweep.Every*:ProdClasses.*' > $OUT/ft-tests.log 2>&1
echo "ft tests rc $? at $SECONDS s"
wait $pip_pid; tail -1 /tmp/pip.log; tail -30 /tmp/pip.log > $OUT/pip-tail.log
(cd "$repo" && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 120 python3 -m pytest -p no:cacheprovider -ra -q python/tests > $OUT/pytest.log 2>&1; echo "pytest rc $? at $SECONDS s")
left() { [[ $SECONDS -lt $1 ]] || { echo "skipped $2 at $SECONDS s"; return 1; }; }
if left 470 skinny-ab; then
  for b in s10a s10d s10a s10d; do
    r=$([[ -e $b-sk-1-4096x4096-r1.csv ]] && echo 2 || echo 1)
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192 8192x28672; do
      for m in 1 16; do
        timeout 30 $b/tcgemm-bench --m $m --n ${nk%x*} --k ${nk#*x} --kernels tcgemm --iters 40 --seed 7 --csv $b-sk-$m-$nk-r$r.csv > /dev/null 2>&1 || echo "FAIL $b $m $nk"
      done
    done
    echo "$b skinny r$r done at $SECONDS s"
    [[ $SECONDS -lt 520 ]] || break
  done
fi
if left 520 squares-ab; then
  for b in s10a s10b s10a s10b; do
    r=$([[ -e $b-sq2048-r1.csv ]] && echo 2 || echo 1)
    for s in 2048 3072; do
      timeout 30 $b/tcgemm-bench --m $s --n $s --k $s --kernels tcgemm --iters 40 --seed 7 --csv $b-sq$s-r$r.csv > /dev/null 2>&1 || echo "FAIL $b sq $s"
    done
    [[ $SECONDS -lt 555 ]] || break
  done
fi
tar czf $OUT/ab.tar.gz s10?-*.csv 2>/dev/null
for f in sk-tests ft-tests; do echo "== $f"; grep -E "^\[  PASSED|^\[  FAILED|tests from .* ran" $OUT/$f.log | tail -4; done
grep -E "ERROR SUMMARY" $OUT/sk-memcheck.log
tail -4 $OUT/pytest.log
