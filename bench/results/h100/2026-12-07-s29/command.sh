#!/bin/bash
# Session 29 (2026-12-07). Prepared for the H200; the one call that ran
# (`command.sh floor ragged layouts8192 tests`) got an H100 80GB HBM3
# (README.md). Run from the repository root as
# `bash bench/results/h100/2026-12-07-s29/command.sh PART...`. Builds carried
# (gitignored, nvcc 13.0, sm_90a, Release; `tar cf - DIR | xz -T2 -6`):
#   .carry/b32.tar.xz  main at d8c650d (kernels and dispatch as on main at
#                      3a8f417; later commits change validate() and docs):
#                      tcgemm-bench, tcgemm-tune, tcgemm-host-overhead,
#                      tcgemm_gpu_tests
#   .carry/b35.tar.xz  branch review/test-checks at cf63582 (merged into main as
#                      d286d23): tcgemm_gpu_tests
#   .carry/py          site311.tar.xz, the Python package (pip build, cp311; the
#                      device's Python was 3.12, so `tests` could not import
#                      it: pybuild builds the package there instead)
# Parts (each packs its own files into $OUT as it ends):
#   tests    b35's changed GPU tests and the changed Python tests (run with
#            review/test-checks checked out)
#   layouts  the eight storage orders at 4096^3 and 8192^3 (bf16; fp16 tn,
#            ttr), the batched set; layouts8192: 8192^3 only, no batched set
#   ragged   the ragged set
#   floor    the ragged shapes with A and B in place (no repack), their C as
#            in the ragged set, and the 17th tile column alone
#   tune8192 tcgemm-tune on 8192^3 in the six orders the table lacks, into a
#            copy of the table, then the eight orders with that copy
#   bars     copy rates, the llm set (tn, tnr), bf16 and fp16 squares
#   suite    the GPU suite but the stream-K tail suites, memcheck, racecheck
#   pybuild  the package built from this tree on the device (16 jobs, about
#            200 s), then the Python tests `tests` runs (run from the root,
#            no .carry needed)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
if [[ $1 == pybuild ]]; then
  export CMAKE_BUILD_PARALLEL_LEVEL=16
  timeout 250 python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/site \
    -Cbuild-dir=/tmp/pybuild . > /tmp/pip.log 2>&1
  echo "pip rc $?"; tail -n 3 /tmp/pip.log
  root=$PWD
  cd /tmp && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 90 python3 -m pytest -q -p no:cacheprovider \
    $root/python/tests/test_torch_ops.py $root/python/tests/test_matmul_gpu.py 2>&1 | tail -n 5
  exit
fi
cd .carry || exit 1
for x in b32 b35; do [[ -f $x.tar.xz && ! -f $x/COMMIT ]] && tar xJf $x.tar.xz; done
b=b32
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s29-$1.tar.gz *.csv *.log *.txt *.json 2>/dev/null; }
bench() {  # bench NAME SECONDS ARGS...: tcgemm-bench's tcgemm row into NAME.csv
  local name=$1 seconds=$2; shift 2
  timeout $seconds $b/tcgemm-bench --kernels tcgemm --seed 7 --csv $name.csv "$@" > $name.log 2>&1 \
    || echo "FAIL $name ($?)"
  echo "$name at $SECONDS s"
}
for part in "$@"; do
gpu $part
case $part in
tests)
  TCGEMM_REQUIRE_GPU=1 timeout 150 b35/tcgemm_gpu_tests \
    --gtest_filter='GemmPlanTest.*:ProdChoices.SplitOfTheLastWaveNeedsOneCtaPerSm:GemmApi.*:*KernelVsReference.*:BatchInvariance.*' > tests.log 2>&1
  echo "gpu tests rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" tests.log | tail -8
  python3 --version
  rm -rf site && mkdir site && tar xJf py/site311.tar.xz -C site
  (cd .. && PYTHONPATH=.carry/site TCGEMM_REQUIRE_GPU=1 timeout 150 python3 -m pytest -q -p no:cacheprovider \
    python/tests/test_torch_ops.py python/tests/test_matmul_gpu.py) > pytest.log 2>&1
  echo "pytest rc $? at $SECONDS s"; tail -n 3 pytest.log ;;
layouts|layouts8192)
  sizes="8192 4096"; [[ $part == layouts8192 ]] && sizes=8192
  for n in $sizes; do
    bench layouts-bf16-$n 70 --m $n --n $n --k $n --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr
    bench layouts-fp16-$n 30 --m $n --n $n --k $n --dtype fp16 --layout tn,ttr
  done
  [[ $part == layouts ]] && bench batched 40 --shapes batched ;;
ragged)
  bench ragged 150 --shapes ragged ;;
floor)
  # The ragged shapes' costs but the repack, and the 17th tile column: each
  # with an A and B TMA can stream in place (lda = ldb = 4096), the same C.
  for f in "4096 4096 4096 4096" "4096 4096 4093 4096" "4096 4096 4096 4097" "4095 4097 4093 4095" \
           "4095 4097 4093 4096" "4096 4097 4096 4096"; do
    set -- $f
    bench floor-$1-$2-$3-ldc$4 30 --m $1 --n $2 --k $3 --lda 4096 --ldb 4096 --ldc $4
  done
  for f in floor-*.csv; do grep -v '^#' $f | tail -n +2 >> floor.csv; done ;;
tune8192)
  # The tuned table holds tn and tnr only; the other six orders at 8192^3
  # run the heuristic's choice. Time every candidate there into a copy of
  # the table, then the tcgemm row with that copy beside cuBLAS.
  cp ../data/tuned/nvidia-h200.json tuned-8192.json
  timeout 150 $b/tcgemm-tune --shape 8192x8192x8192 --layouts nn,nt,tt,nnr,ntr,ttr --seed 7 \
    --out tuned-8192.json > tune-8192.log 2>&1
  echo "tune rc $? at $SECONDS s"; tail -n 12 tune-8192.log
  bench layouts-bf16-8192-tuned 70 --m 8192 --n 8192 --k 8192 --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr \
    --tuned-table tuned-8192.json ;;
bars)
  for mib in 1024 16 56 224; do
    timeout 30 $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1 || echo "FAIL copy rate $mib"
  done
  bench llm 170 --shapes llm --layout tn,tnr
  bench square 100 --shapes square --layout tn --dtype bf16
  bench square-fp16 100 --shapes square --layout tn --dtype fp16 ;;
suite)
  TCGEMM_REQUIRE_GPU=1 timeout 300 $b/tcgemm_gpu_tests --gtest_filter='-EveryConfig/ProdStreamKTail.*' > gpu-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" gpu-suite.log | tail -8
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 97 $b/tcgemm_gpu_tests \
      --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool.log | tail -n 3
  done ;;
*) echo "usage: command.sh tests|layouts|layouts8192|ragged|floor|tune8192|bars|suite|pybuild..." >&2; exit 2 ;;
esac
gpu $part; pack $part
done
