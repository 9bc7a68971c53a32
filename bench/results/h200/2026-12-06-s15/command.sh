#!/bin/bash
# Session 15 (2026-12-06): the H200 commands, in the order they ran.
# Build carried: .carry/s15.tar.xz = main 719a17a (gitignored; Release,
# sm_90a, `cmake --build --preset release --target tcgemm-bench tcgemm-tune
# tcgemm-host-overhead tcgemm_gpu_tests`, the four binaries tarred).
#   bash THIS one      re-tune llm and squares into new.json, then the tcgemm
#                      row against cuBLAS with it (llm beside the copy rate,
#                      squares), in one 600-second command
#   bash THIS final    the GPU suite, the Python package built meanwhile and
#                      pytest, the heldout set's tcgemm row; the TMA box-start
#                      probe in every swizzle mode beside them
#   bash THIS suite    the GPU suite alone (for a short remaining budget)
#   bash THIS llm      `one` cut to about 400 s: the llm set re-tuned, the
#                      copy rates, the llm row with the new table
#   bash THIS ld       4096^3 at padded leading dimensions under each TMA L2
#                      promotion (experiment build s15x), ncu's L2 counts
#   bash THIS rest     with new.json: ragged, batched, the eight storage
#                      orders at 4096 and 8192 (bf16; fp16 tn and ttr), host
#                      overhead; memcheck and racecheck on the family
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
cd .carry && { [[ -d s15 ]] || tar xJf s15.tar.xz; }
b=s15
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu.txt; }
pack() { tar czf $OUT/s15-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu
case $1 in
one)
  timeout 200 $b/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  timeout 80 $b/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out new.json >> tune.log 2>&1
  timeout 50 $b/tcgemm-tune --shapes square --dtype fp16 --layouts tn --out new.json >> tune.log 2>&1
  echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack one
  $b/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 150 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table new.json --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  for mib in 1024 16 56 224; do $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1; done
  echo "llm at $SECONDS s"; gpu; pack one
  timeout $((585 - SECONDS)) $b/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --tuned-table new.json --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s" ;;
final)
  ( t0=$SECONDS; CMAKE_BUILD_PARALLEL_LEVEL=14 python3 -m pip install --disable-pip-version-check \
      --no-build-isolation --no-deps --target /tmp/site -Cbuild-dir=/tmp/pybuild "$repo" > pip.log 2>&1
    echo "pip rc $? in $((SECONDS - t0)) s" >> pip.log ) &
  pip_pid=$!
  # Which TMA box starts load (every case, mode and swizzle; one process
  # each, an illegal instruction ends only its own context), beside the rest.
  ( for sw in 128 64 32 none none16; do for mode in shifted aligned; do for c in 0 1 2 3 4 5 6 7; do
      timeout 20 $b/tcgemm-tma-probe $c $mode $sw; echo "  (exit $?)"; done; done; done > tma-probe.txt 2>&1 ) &
  TCGEMM_REQUIRE_GPU=1 timeout 300 $b/tcgemm_gpu_tests --gtest_filter='-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > main-gpu-suite.log 2>&1
  echo "main suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" main-gpu-suite.log | tail -5; pack final
  wait $pip_pid; tail -1 pip.log
  (cd "$repo" && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 120 python3 -m pytest -p no:cacheprovider -ra -q python/tests > "$repo/.carry/pytest.log" 2>&1; echo "pytest rc $? at $SECONDS s"); tail -3 pytest.log; pack final
  timeout $((580 - SECONDS)) $b/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm --seed 7 --csv heldout.csv > /dev/null 2>&1 || echo "FAIL heldout bench"
  echo "heldout bench at $SECONDS s" ;;
suite)
  # What a session with under 450 device seconds left can still check: the
  # GPU suite alone.
  TCGEMM_REQUIRE_GPU=1 timeout 280 $b/tcgemm_gpu_tests --gtest_filter='-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > main-gpu-suite.log 2>&1
  echo "main suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" main-gpu-suite.log | tail -5 ;;
rest)
  t=""; [[ -f new.json ]] && t="--tuned-table new.json"  # the table `one` tuned, if it ran
  timeout 60 $b/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 $t --csv ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
  timeout 40 $b/tcgemm-bench --shapes batched --kernels tcgemm --seed 7 $t --csv batched.csv > /dev/null 2>&1 || echo "FAIL batched"
  echo "ragged, batched at $SECONDS s"; pack rest
  for n in 4096 8192; do
    timeout 70 $b/tcgemm-bench --m $n --n $n --k $n --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr --kernels tcgemm --seed 7 $t --csv layouts-bf16-$n.csv > /dev/null 2>&1 || echo "FAIL layouts $n"
    timeout 30 $b/tcgemm-bench --m $n --n $n --k $n --dtype fp16 --layout tn,ttr --kernels tcgemm --seed 7 $t --csv layouts-fp16-$n.csv > /dev/null 2>&1 || echo "FAIL fp16 $n"
  done
  echo "layouts at $SECONDS s"; pack rest
  timeout 50 $b/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 || echo "FAIL host"
  for tool in memcheck racecheck; do
    lim=$((575 - SECONDS)); [[ $tool == memcheck ]] && lim=$((lim / 2))
    TCGEMM_REQUIRE_GPU=1 timeout $lim compute-sanitizer --tool $tool $b/tcgemm_gpu_tests --gtest_filter='ProdSweep.SanitizerSubsetIsCorrectAndTouchesOnlyC:ProdChoices.StagedEpilogueSanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep "SUMMARY" $tool.log | tail -1
  done ;;
llm)
  # `one` cut to what about 400 device seconds hold: the llm set re-tuned,
  # the copy rates, the llm set's tcgemm row with the new table.
  timeout 190 $b/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --warmup 2 --reps 5 --long-reps 3 --long-ms 5 --out new.json > tune.log 2>&1
  echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack llm
  for mib in 1024 16 56 224; do $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1; done
  echo "copy at $SECONDS s"; pack llm
  timeout $((400 - SECONDS)) $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table new.json --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  echo "llm at $SECONDS s" ;;
ld)
  # 4096^3 with padded leading dimensions (rows 128-byte aligned or not),
  # under each L2 promotion of the tensor maps (an experiment build,
  # .carry/s15x.tar.xz: tcgemm-bench-promo reads TCGEMM_X_PROMOTION), then
  # ncu's L2 counts for ld 4096 and 4104 on the same build as main.
  { [[ -d s15x ]] || tar xJf s15x.tar.xz; }
  for p in 256 128 0; do for ld in 4096 4104 4112 4160; do
    TCGEMM_X_PROMOTION=$p timeout 30 s15x/tcgemm-bench-promo --m 4096 --n 4096 --k 4096 --lda $ld --ldb $ld --ldc $ld --kernels tcgemm --seed 7 --csv ld-$ld-promo-$p.csv > /dev/null 2>&1 || echo "FAIL ld $ld promo $p"
  done; done
  echo "ld sweep at $SECONDS s"; pack ld
  for ld in 4096 4104; do
    timeout 100 ncu --clock-control none --kernel-name-base demangled --kernel-name regex:prod --launch-skip 4 --launch-count 1 \
      --metrics gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_requests_op_read.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed \
      s15x/tcgemm-bench --m 4096 --n 4096 --k 4096 --lda $ld --ldb $ld --ldc $ld --kernels prod-128x256 --warmup 3 --iters 3 > ncu-ld-$ld.txt 2>&1 || echo "FAIL ncu $ld"
  done
  echo "ncu at $SECONDS s" ;;
esac
gpu; pack $1
# promo: L2 promotion by stride (.carry/s15p.tar.xz: the build with 128-byte
# promotion where a stride is off 256 bytes) against main's build (s15), the
# ragged set and padded leading dimensions in one command, then the family's
# and the API's GPU tests on the new build.
if [[ $1 == promo ]]; then
  { [[ -d s15p ]] || tar xJf s15p.tar.xz; }
  for build in s15 s15p s15 s15p; do
    n=$((n + 1))
    timeout 30 $build/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 --csv ragged-$build-$n.csv > /dev/null 2>&1 || echo "FAIL ragged $build"
    for ld in 4104 4112 4160; do
      timeout 20 $build/tcgemm-bench --m 4096 --n 4096 --k 4096 --lda $ld --ldb $ld --ldc $ld --kernels tcgemm --seed 7 --csv ld-$ld-$build-$n.csv > /dev/null 2>&1 || echo "FAIL ld $ld $build"
    done
  done
  echo "benches at $SECONDS s"; pack promo
  TCGEMM_REQUIRE_GPU=1 timeout $((200 - SECONDS)) s15p/tcgemm_gpu_tests --gtest_filter='Prod*:GemmApi*:GemmPlan*:Tensor*:Tma*-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' --gtest_brief=1 > promo-tests.log 2>&1
  echo "tests rc $? at $SECONDS s"; tail -3 promo-tests.log; gpu; pack promo
fi
