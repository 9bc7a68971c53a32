#!/bin/bash
# Session 27 (2026-12-07). Run from the repository root as
# `bash bench/results/h100/2026-12-07-s27/command.sh PART`. Builds carried
# (gitignored, nvcc 13.0, sm_90a, Release):
#   .carry/b28.tar.xz         main at 26ffda2 (see ../2026-12-07-s26/command.sh)
#   .carry/exp/tcgemm-bench.xz  main at 1fba698 with repack-hint.diff (in this
#                             folder): the repack's loads and stores take an
#                             L2 policy from TCGEMM_EXP_REPACK_HINT (0: none,
#                             as main; 1: loads evict-first; 2: and stores
#                             evict-last)
#   .carry/b29.tar.xz         branch exp/copy-warps at 852e94e (b29/COMMIT):
#                             tcgemm-bench, tcgemm_gpu_tests
#   .carry/b30.tar.xz         the same branch later (b30/COMMIT): copy warps
#                             with 56 registers, the last tile copied by the
#                             consumers, shared loads and 16-byte stores
# Parts:
#   hint  the repacked 4096-class problems under each policy, three
#         alternating rounds, beside the aligned 4096^3 and C alone at
#         ldc 4097 (about 80 s)
#   check [B]  build B's (default b29) GPU suite but the stream-K tail
#         suites, then memcheck and racecheck on the sanitizer subsets
#         (about 300 s)
#   ab [B]     b28 against build B (default b29) on C that TMA cannot
#         store (and the aligned 4096^3), three alternating rounds,
#         scripts/bench-ab (about 80 s)
#   tests      b31's (main's tcgemm_gpu_tests with the one-tile-per-CTA and
#         K = 128 staged cases) ProdChoices.Staged* and the stream-K tail
#         suite on the rows with copy warps (configs 0, 2, 5, 8), IsCorrect
#         only (about 120 s)
#   rows [B]   build B's (default b30) tcgemm row on the ragged set and the
#         eight storage orders at 8192^3 (bf16), beside cuBLAS (about 90 s)
#   ncu   prod-128x256 at 4096^3: b28 with ldc 4096 (TMA store) and 4097
#         (staged), b29 with ldc 4097 (copy warps); warp states and
#         per-instruction samples (about 150 s)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry || exit 1
[[ -f b28/tcgemm-bench ]] || tar xJf b28.tar.xz
[[ -f exp/tcgemm-bench ]] || xz -dk exp/tcgemm-bench.xz
chmod +x exp/tcgemm-bench
pack() { tar czf $OUT/s27-$1.tar.gz hint-*.csv hint*.log 2>/dev/null; }
one() {  # one BINARY NAME ARGS...: one problem's tcgemm row, appended to hint-NAME.csv
  local bin=$1 name=$2; shift 2
  timeout 20 $bin --kernels tcgemm --seed 7 --csv hint-tmp.csv "$@" >> hint.log 2>&1 || echo "FAIL $name $*"
  if [[ -f hint-$name.csv ]]; then grep -v '^#' hint-tmp.csv | tail -n +2 >> hint-$name.csv
  else cp hint-tmp.csv hint-$name.csv; fi
}
ab_problems=(
  "--m 4096 --n 4096 --k 4096"
  "--m 4096 --n 4096 --k 4096 --ldc 4097"
  "--m 4096 --n 4096 --k 4096 --offset 1"
  "--m 4096 --n 4096 --k 4096 --lda 4097 --ldb 4097 --ldc 4097"
  "--m 4095 --n 4097 --k 4093"
  "--m 4095 --n 4096 --k 4096"
  "--m 8191 --n 8192 --k 8192"
  "--m 2048 --n 2048 --k 2048 --ldc 2049"
  "--m 1024 --n 1024 --k 1024 --ldc 1025"
  "--m 4096 --n 4096 --k 4096 --ldc 4097 --dtype fp16 --beta 1"
  "--m 8192 --n 8192 --k 8192"
)
new=${2:-b29}
case $1 in
check)
  [[ -f $new/tcgemm_gpu_tests ]] || tar xJf $new.tar.xz
  TCGEMM_REQUIRE_GPU=1 timeout 280 $new/tcgemm_gpu_tests --gtest_filter='-EveryConfig/ProdStreamKTail.*' > check-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" check-suite.log | tail -8
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 97 $new/tcgemm_gpu_tests \
      --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset' > check-$tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" check-$tool.log | tail -n 3
  done
  xz -f check-suite.log
  tar czf $OUT/s27-check-$new.tar.gz check-* ;;
ab)
  [[ -f $new/tcgemm-bench ]] || tar xJf $new.tar.xz
  rm -f ab-*
  for round in 1 2 3; do
    for b in b28 $new; do
      rm -f ab-$b-$round.csv
      for args in "${ab_problems[@]}"; do
        timeout 30 $b/tcgemm-bench --kernels tcgemm --seed 7 --csv ab-tmp.csv $args >> ab.log 2>&1 || echo "FAIL $b $args"
        if [[ -f ab-$b-$round.csv ]]; then grep -v '^#' ab-tmp.csv | tail -n +2 >> ab-$b-$round.csv
        else cp ab-tmp.csv ab-$b-$round.csv; fi
      done
    done
    echo "round $round at $SECONDS s"
  done
  rm -f ab-tmp.csv; xz -f ab.log
  tar czf $OUT/s27-ab-$new.tar.gz ab-*
  python3 ../scripts/bench-ab --a ab-b28-*.csv --b ab-$new-*.csv ;;
tests)
  [[ -f b31/tcgemm_gpu_tests ]] || tar xJf b31.tar.xz
  TCGEMM_REQUIRE_GPU=1 timeout 60 b31/tcgemm_gpu_tests --gtest_filter='ProdChoices.Staged*' > tests-staged.log 2>&1
  echo "staged rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|^\[       OK" tests-staged.log | tail -6
  TCGEMM_REQUIRE_GPU=1 timeout 150 b31/tcgemm_gpu_tests \
    --gtest_filter='EveryConfig/ProdStreamKTail.IsCorrect/prod_128x256:EveryConfig/ProdStreamKTail.IsCorrect/prod_128x128:EveryConfig/ProdStreamKTail.IsCorrect/prod_128x192:EveryConfig/ProdStreamKTail.IsCorrect/prod_128x96' \
    > tests-streamk.log 2>&1
  echo "stream-K rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|^\[       OK" tests-streamk.log | tail -6
  tar czf $OUT/s27-tests.tar.gz tests-* ;;
rows)
  b=${2:-b30}
  [[ -f $b/tcgemm-bench ]] || tar xJf $b.tar.xz
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader > rows-gpu.log
  timeout 40 $b/tcgemm-bench --kernels tcgemm --seed 7 --shapes ragged --csv rows-ragged.csv > rows-ragged.log 2>&1 || echo "FAIL ragged"
  echo "ragged at $SECONDS s"
  timeout 60 $b/tcgemm-bench --kernels tcgemm --seed 7 --m 8192 --n 8192 --k 8192 --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr \
    --csv rows-8192.csv > rows-8192.log 2>&1 || echo "FAIL 8192"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> rows-gpu.log
  tar czf $OUT/s27-rows-$b.tar.gz rows-*
  grep -E "^tcgemm" rows-ragged.log rows-8192.log | awk '{print $2, $3, $4, $7, $8, $9, $13}' ;;
ncu)
  [[ -f b29/tcgemm-bench ]] || tar xJf b29.tar.xz
  for run in "b28 4096" "b28 4097" "b29 4097"; do
    set -- $run
    timeout 150 ncu --clock-control none --kernel-name-base demangled --kernel-name regex:prod::kernel \
      --launch-skip 4 --launch-count 1 -f -o ncu-$1-$2 \
      --section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats \
      --section ComputeWorkloadAnalysis --section SchedulerStats \
      $1/tcgemm-bench --m 4096 --n 4096 --k 4096 --ldc $2 --kernels prod-128x256 --warmup 3 --iters 20 \
      > ncu-$1-$2.log 2>&1 || echo "FAIL ncu $run"
    ncu --import ncu-$1-$2.ncu-rep --print-details all > ncu-$1-$2.txt 2>&1
    ncu --import ncu-$1-$2.ncu-rep --page source --csv --print-source sass > ncu-$1-$2-sass.csv 2>&1
    xz -f ncu-$1-$2-sass.csv
    echo "ncu $run at $SECONDS s"; grep -E "Duration|Issued Warp Per Scheduler|No Eligible" ncu-$1-$2.txt | head -4
  done
  tar czf $OUT/s27-ncu.tar.gz ncu-* ;;
hint)
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader > hint-gpu.log
  for round in 1 2 3; do
    one b28/tcgemm-bench aligned --m 4096 --n 4096 --k 4096
    one b28/tcgemm-bench ldc4097 --m 4096 --n 4096 --k 4096 --ldc 4097
    for mode in 0 1 2; do
      export TCGEMM_EXP_REPACK_HINT=$mode
      one exp/tcgemm-bench k4093-m$mode --m 4096 --n 4096 --k 4093
      one exp/tcgemm-bench ld4097-m$mode --m 4096 --n 4096 --k 4096 --lda 4097 --ldb 4097
      one exp/tcgemm-bench tight-m$mode --m 4095 --n 4097 --k 4093
    done
    unset TCGEMM_EXP_REPACK_HINT
    echo "round $round at $SECONDS s"
  done
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> hint-gpu.log
  pack hint
  python3 - hint-*.csv <<'PY'
import csv, statistics, sys
for path in sys.argv[1:]:
    rows = list(csv.DictReader(l for l in open(path) if not l.startswith("#")))
    ms = {k: statistics.median(float(r["median_ms"]) for r in rows if r["kernel"] == k)
          for k in ("tcgemm", "cublas")}
    n = sum(r["kernel"] == "tcgemm" for r in rows)
    print(f"{path:24} tcgemm {ms['tcgemm']:.4f} ms  cublas {ms['cublas']:.4f} ms  ({n} rounds)")
PY
  ;;
*) echo "usage: command.sh hint|check|ab|tests|rows|ncu" >&2; exit 2 ;;
esac
