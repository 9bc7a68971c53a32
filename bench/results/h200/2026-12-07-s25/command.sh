#!/bin/bash
# Session 25 (2026-12-07): the device commands, run from the repository root
# as `bash bench/results/h200/2026-12-07-s25/command.sh PART`. The first job
# is the GPU tests that session 24 wrote and could not run (its README's
# "Not yet run on a GPU"). Build carried (gitignored, nvcc 13.0, sm_90a,
# Release; packed with `tar cf - DIR | xz -T2 -6`):
#   .carry/b26.tar.xz  main at b26/COMMIT: tcgemm-bench, tcgemm-tune,
#                      tcgemm-host-overhead, tcgemm_gpu_tests
#   .carry/b26x.tar.xz branch exp/skinny-balance at b26x/COMMIT: tcgemm-bench
#                      (the library differs from b26's only in skinny.cpp)
# Parts:
#   check    the GPU suite but ProdChoices and the stream-K tail suites, with
#            the Python package (the working tree) built by pip meanwhile;
#            then ProdChoices, pytest with a GPU required, and memcheck and
#            racecheck on the sanitizer subsets (about 350 s)
#   tests    `check` without the Python package (its tests' changes ran in
#            session 24): the suite, ProdChoices, then `san` (about 210 s:
#            session 24's suite 130 s, ProdChoices 30, san 45)
#   short    for a short budget: the suite but ProdChoices and the stream-K
#            tail suites, then ProdChoices while time is left (about 170 s)
#   ab       exp/skinny-balance (b26x) against main (b26): the tcgemm row
#            of M = 8 against the heldout set's six weights (tn, tnr; the
#            branch changes all six on 132 SMs), the builds alternating,
#            four rounds each, then scripts/bench-ab (about 150 s)
#   san      memcheck and racecheck on the sanitizer subsets
#   tail     the stream-K tail suites that `check` leaves out
#   heldout  every candidate timed on the heldout set (bf16 tn, tnr) into
#            heldout.json: the H200's first out-of-sample data for the
#            heuristic (resumable: run it again to finish)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
here=$repo/bench/results/h200/2026-12-07-s25
cd .carry || exit 1
[[ -f b26/tcgemm-bench ]] || tar xJf b26.tar.xz
[[ -f b26x.tar.xz && ! -f b26x/tcgemm-bench ]] && tar xJf b26x.tar.xz
b=b26
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s25-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
# gtests LOG SECONDS FILTER: the GPU tests FILTER selects, under a time
# limit, into LOG; prints the status and gtest's summary lines.
gtests() {
  TCGEMM_REQUIRE_GPU=1 timeout $2 $b/tcgemm_gpu_tests --gtest_filter="$3" > $1 2>&1
  echo "$1 rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" $1 | tail -12
}
suite='-EveryConfig/ProdStreamKTail.*:ProdChoices.*'  # all but the two long suites
gpu $1
case $1 in
check)
  ( t0=$SECONDS; CMAKE_BUILD_PARALLEL_LEVEL=12 python3 -m pip install --disable-pip-version-check \
      --no-build-isolation --no-deps --target /tmp/site -Cbuild-dir=/tmp/pybuild "$repo" > pip.log 2>&1
    echo "pip rc $? in $((SECONDS - t0)) s" >> pip.log ) &
  pip_pid=$!
  gtests gpu-suite.log 300 "$suite"; pack check
  gtests prodchoices.log 120 'ProdChoices.*'; pack check
  wait $pip_pid; tail -n 1 pip.log
  (cd "$repo" && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 120 python3 -m pytest -p no:cacheprovider -ra -q python/tests > "$repo/.carry/pytest.log" 2>&1; echo "pytest rc $? at $SECONDS s"); tail -n 1 pytest.log
  pack check
  (cd "$repo" && bash $here/command.sh san) ;;
tests)
  gtests gpu-suite.log 260 "$suite"; pack tests
  gtests prodchoices.log 100 'ProdChoices.*'; pack tests
  (cd "$repo" && bash $here/command.sh san) ;;
ab)
  for round in 1 2 3 4; do
    for side in b26 b26x; do
      for nk in 5120x5120 6144x4096 5120x13824 13824x5120 10240x8192 18944x3584; do
        timeout 60 $side/tcgemm-bench --m 8 --n ${nk%x*} --k ${nk#*x} --layout tn,tnr --kernels tcgemm \
          --seed 7 --csv ab-$round-$side-$nk.csv > /dev/null 2>&1 || echo "FAIL $side $nk round $round"
      done
    done
  done
  echo "ab at $SECONDS s"
  python3 "$repo/scripts/bench-ab" --a ab-*-b26-*.csv --b ab-*-b26x-*.csv > bench-ab.txt 2>&1
  echo "bench-ab rc $?"; cat bench-ab.txt ;;
short)
  gtests gpu-suite.log 200 "$suite"; pack short
  left=$((270 - SECONDS))
  (( left > 20 )) && gtests prodchoices.log $left 'ProdChoices.*' ;;
san)
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 97 $b/tcgemm_gpu_tests --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool.log | tail -n 3
  done ;;
tail)
  gtests streamk-tail.log 400 'EveryConfig/ProdStreamKTail.*' ;;
heldout)
  timeout 540 $b/tcgemm-tune --shapes heldout --dtype bf16 --layouts tn,tnr --out heldout.json >> tune-heldout.log 2>&1
  echo "tune rc $? at $SECONDS s"; grep -c "^\[" tune-heldout.log; grep -E "heuristic vs" tune-heldout.log | tail -2 ;;
esac
gpu $1; pack $1
