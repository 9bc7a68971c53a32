#!/bin/bash
# Session 28 (2026-12-07). Run from the repository root as
# `bash bench/results/h100/2026-12-07-s28/command.sh PART`. Builds carried
# (gitignored, nvcc 13.0, sm_90a, Release; `tar cf - DIR | xz -T2 -6`):
#   .carry/b32.tar.xz  main at d8c650d: tcgemm-bench, tcgemm-tune,
#                      tcgemm-host-overhead, tcgemm_gpu_tests
#   .carry/b33.tar.xz  main + the small-M path's one-block-per-SM rule
#                      (b33/COMMIT): tcgemm-bench, tcgemm_gpu_tests
# Parts:
#   skinny  b33's small-M tests (ProdSmallM.*), then b32 against b33 on
#           M = 9..16 against 4096 rows (and controls the rule leaves
#           alone), the prod-skinny and tcgemm rows, three alternating
#           rounds (about 150 s)
#   (A `tests` part for the test audit's checks was prepared here and
#   never ran; session 29 ran its successor: `tests` and `pybuild` in
#   bench/results/h100/2026-12-07-s29/command.sh.)
# (row-class-boxes/ has its own command.sh.)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry || exit 1
for b in b32 b33; do [[ -f $b/tcgemm-bench ]] || tar xJf $b.tar.xz; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
problems=(
  "--m 16 --n 4096 --k 4096"
  "--m 16 --n 4096 --k 14336"
  "--m 12 --n 4096 --k 4096"
  "--m 16 --n 4096 --k 11008"
  "--m 16 --n 14336 --k 4096"
  "--m 8 --n 4096 --k 4096"
)
case $1 in
skinny)
  TCGEMM_REQUIRE_GPU=1 timeout 120 b33/tcgemm_gpu_tests --gtest_filter='ProdSmallM.*' > skinny-tests.log 2>&1
  echo "tests rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" skinny-tests.log | tail -5
  rm -f ab-*.csv
  for round in 1 2 3; do
    for b in b32 b33; do
      for args in "${problems[@]}"; do
        timeout 20 $b/tcgemm-bench --kernels prod-skinny,tcgemm --layout tn,tnr --seed 7 --csv tmp.csv $args > tmp.log 2>&1 \
          || echo "FAIL $b $args"
        if [[ -f ab-$b-$round.csv ]]; then grep -v '^#' tmp.csv | tail -n +2 >> ab-$b-$round.csv
        else cp tmp.csv ab-$b-$round.csv; fi
      done
      echo "$b round $round at $SECONDS s"
    done
  done
  tar czf $OUT/s28-skinny.tar.gz skinny-tests.log ab-*.csv ;;
*) echo "usage: command.sh skinny" >&2; exit 2 ;;
esac
