#!/bin/bash
# Session 20 (2026-12-06): the device commands, run from the repository root
# as `bash bench/results/h100/2026-12-06-s20/command.sh PART`. Build
# carried (gitignored, nvcc 13.0, sm_90a, Release; its COMMIT says which):
#   .carry/s20.tar.xz  main cd0f703 with the stream-K tail tests split per
#                      config (fd8acc5): tcgemm-bench, tcgemm-tune,
#                      tcgemm-host-overhead, tcgemm_gpu_tests
#                      (s20m.tar.xz: its tcgemm-bench alone)
#   .carry/s21.tar.xz  branch row-major-tma (d72c7ec): tcgemm-bench,
#                      tcgemm_gpu_tests (s21t.tar.xz: its tcgemm-tune)
# Parts:
#   verify   the stream-K tail tests on prod-128x96 (never run to the end on
#            it), memcheck and racecheck on the sanitizer subsets (the
#            TMA-store subset new), then the GPU suite but the other
#            configs' stream-K tail tests (their kernels unchanged since
#            they last passed)
#   measure  (not run: meant for an H200, none was lent) the eight storage
#            orders at 4096^3 and 8192^3 (bf16; fp16 tn and ttr), the
#            ragged and batched sets, host overhead, squares (bf16, fp16 tn)
#   llm      (not run, likewise) the llm set (tn, tnr) with copy rates
#            beside it, then re-tune llm into new.json (prod-128x96 a
#            candidate)
#   rowtma   (branch row-major-tma, build s21 in .carry/s21.tar.xz) the GPU
#            tests ProdChoices.*, ProdSweep.*, GemmPlanTest.*,
#            memcheck and racecheck on the sanitizer subsets (the TMA-store
#            one now in both orientations), the tcgemm row of main (s20m)
#            and s21 on flipped picks, order main, new, new, main
#   tune21   (not run: the device time was spent) the heldout set tuned on
#            s21 (its tcgemm-tune alone, .carry/s21t.tar.xz): every
#            candidate in both orientations, the flipped ones' output by TMA
#            store where C allows (heldout-s21.json)
#   heldout  time every candidate, both orientations, on the heldout set
#            (tn, tnr) into heldout.json: the heuristic's choices against
#            the measured best, out of sample (tcgemm-tune --report
#            --rescore); then ncu on prod-128x128's tn and tnr tiles of
#            256 x 5120 x 5120 (`command.sh heldout ncu` runs that alone)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && { [[ -f s20/tcgemm-bench ]] || tar xJf s20.tar.xz; }
b=s20
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s20-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu $1
sanitize() {
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 97 $b/tcgemm_gpu_tests --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool.log | tail -n 3
  done
}
case $1 in
verify)
  TCGEMM_REQUIRE_GPU=1 timeout 200 $b/tcgemm_gpu_tests --gtest_filter='EveryConfig/ProdStreamKTail.*/prod_128x96' > streamk-128x96.log 2>&1
  echo "stream-K 128x96 rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|OK \]" streamk-128x96.log | tail -4; pack verify
  sanitize; pack verify
  TCGEMM_REQUIRE_GPU=1 timeout $((590 - SECONDS)) $b/tcgemm_gpu_tests --gtest_filter='-EveryConfig/ProdStreamKTail.*' > gpu-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" gpu-suite.log | tail -8 ;;
measure)
  for n in 4096 8192; do
    timeout 70 $b/tcgemm-bench --m $n --n $n --k $n --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr --kernels tcgemm --seed 7 --csv layouts-bf16-$n.csv > /dev/null 2>&1 || echo "FAIL layouts $n"
    timeout 30 $b/tcgemm-bench --m $n --n $n --k $n --dtype fp16 --layout tn,ttr --kernels tcgemm --seed 7 --csv layouts-fp16-$n.csv > /dev/null 2>&1 || echo "FAIL fp16 $n"
  done
  echo "layouts at $SECONDS s"; pack measure
  timeout 70 $b/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 --csv ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
  timeout 40 $b/tcgemm-bench --shapes batched --kernels tcgemm --seed 7 --csv batched.csv > /dev/null 2>&1 || echo "FAIL batched"
  timeout 50 $b/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 || echo "FAIL host"
  echo "ragged, batched, host at $SECONDS s"; gpu measure; pack measure
  timeout $((590 - SECONDS)) $b/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s" ;;
llm)
  $b/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 150 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  for mib in 1024 16 56 224; do $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1; done
  echo "llm at $SECONDS s"; gpu llm; pack llm
  timeout $((560 - SECONDS)) $b/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  echo "tune rc $? at $SECONDS s"; grep "heuristic vs" tune.log ;;
rowtma)
  tar xJf s20m.tar.xz; tar xJf s21.tar.xz
  TCGEMM_REQUIRE_GPU=1 timeout 170 s21/tcgemm_gpu_tests --gtest_filter='ProdChoices.*:ProdSweep.*:GemmPlanTest.*' > tests-s21.log 2>&1
  echo "tests rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" tests-s21.log | tail -8; pack rowtma
  b=s21; sanitize; pack rowtma
  shapes="96 6144 4096 tn,32 5120 5120 tn,16 8192 28672 tn,64 8192 28672 tn,256 5120 5120 tnr,4096 4096 4096 tn"
  IFS=, read -ra list <<< "$shapes"
  slot=0
  for build in s20m s21 s21 s20m; do
    slot=$((slot + 1))
    for shape in "${list[@]}"; do
      read -r m n k l <<< "$shape"
      timeout 30 $build/tcgemm-bench --m $m --n $n --k $k --layout $l --kernels tcgemm --seed 7 --csv ab-$slot-$build-${m}x${n}x$k-$l.csv > /dev/null 2>&1 || echo "FAIL $build $shape"
    done
  done
  echo "ab at $SECONDS s" ;;
tune21)
  tar xJf s21t.tar.xz
  timeout 300 s21t/tcgemm-tune --shapes heldout --dtype bf16 --layouts tn,tnr --out heldout-s21.json > tune-heldout-s21.log 2>&1
  echo "tune rc $? at $SECONDS s"; grep -E "heuristic vs" tune-heldout-s21.log | tail -2 ;;
heldout)
  [[ $2 == ncu ]] || timeout 560 $b/tcgemm-tune --shapes heldout --dtype bf16 --layouts tn,tnr --out heldout.json > tune-heldout.log 2>&1
  echo "tune rc $? at $SECONDS s"; grep -E "heuristic vs|worst|geomean" tune-heldout.log | tail -4; pack heldout
  # DRAM and L2 traffic of one config on a small-M problem in both C
  # layouts (the kernel's large operand multicast in tn, not in tnr).
  for l in tn tnr; do
    timeout 60 ncu --clock-control none --kernel-name-base demangled --kernel-name regex:prod --launch-skip 4 --launch-count 1 \
      --metrics gpu__time_duration.sum,lts__t_sectors_op_read.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed \
      $b/tcgemm-bench --m 256 --n 5120 --k 5120 --layout $l --kernels prod-128x128 --warmup 3 --iters 20 > ncu-256x5120x5120-$l.txt 2>&1 || echo "FAIL ncu $l"
  done
  grep -hE "duration|dram__bytes|sectors_op_read|hit_rate" ncu-*.txt ;;
esac
gpu $1; pack $1
