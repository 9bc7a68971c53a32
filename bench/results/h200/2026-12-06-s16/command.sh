#!/bin/bash
# Session 16 (2026-12-06): the H200 commands, in the order they are meant to
# run. Build carried: .carry/s16.tar.xz = main 6b4ff52 (gitignored; Release,
# sm_90a, `cmake --build --preset release --target tcgemm-bench tcgemm-tune
# tcgemm-host-overhead tcgemm_gpu_tests tcgemm-tma-probe`, the five binaries
# tarred). A part that runs on a fresh machine finds the table `one` tuned
# only if .carry/new.json (copied back from `one`'s output) is carried too.
#   bash THIS one      re-tune llm and squares into new.json, then the tcgemm
#                      row against cuBLAS with it (llm beside the copy rates,
#                      squares), in one 600-second command
#   bash THIS check    the row-class probe (A streamed unrepacked from odd lda
#                      or offset, wgmma with A from registers, against the
#                      aligned form; .carry/s16probe.tar.xz), the GPU suite
#                      (the Python package built meanwhile, then pytest with
#                      a GPU required), the ragged and batched sets,
#                      memcheck and racecheck on the family
#   bash THIS layouts  the eight storage orders at 4096^3 and 8192^3 (bf16;
#                      fp16 tn and ttr), host overhead, the heldout set
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
cd .carry && { [[ -f s16/tcgemm-bench ]] || tar xJf s16.tar.xz; }
{ [[ -f s16probe.tar.xz ]] && tar xJf s16probe.tar.xz; }
b=s16
t=""; [[ -f new.json ]] && t="--tuned-table new.json"  # the table `one` tuned, once it has
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s16-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu $1
case $1 in
one)
  timeout 200 $b/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  timeout 80 $b/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out new.json >> tune.log 2>&1
  timeout 50 $b/tcgemm-tune --shapes square --dtype fp16 --layouts tn --out new.json >> tune.log 2>&1
  echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack one
  $b/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 150 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table new.json --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  for mib in 1024 16 56 224; do $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1; done
  echo "llm at $SECONDS s"; gpu one; pack one
  timeout $((585 - SECONDS)) $b/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --tuned-table new.json --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s" ;;
check)
  ( t0=$SECONDS; CMAKE_BUILD_PARALLEL_LEVEL=12 python3 -m pip install --disable-pip-version-check \
      --no-build-isolation --no-deps --target /tmp/site -Cbuild-dir=/tmp/pybuild "$repo" > pip.log 2>&1
    echo "pip rc $? in $((SECONDS - t0)) s" >> pip.log ) &
  pip_pid=$!
  for a in "--k 4093 --lda 4093" "--k 4096 --lda 4097" "--k 4096 --lda 4096 --offset 1" "--k 4096 --lda 4096" "--k 8191 --lda 8191 --m 8192 --n 8192"; do
    timeout 60 $b/tcgemm-rowclass-probe $a --reps 30 >> rowclass.txt 2>&1 || echo "FAIL rowclass $a" >> rowclass.txt
  done
  echo "rowclass at $SECONDS s"; cat rowclass.txt; pack check
  TCGEMM_REQUIRE_GPU=1 timeout 280 $b/tcgemm_gpu_tests --gtest_filter='-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > gpu-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" gpu-suite.log | tail -5; pack check
  wait $pip_pid; tail -n 1 pip.log
  (cd "$repo" && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 90 python3 -m pytest -p no:cacheprovider -ra -q python/tests > "$repo/.carry/pytest.log" 2>&1; echo "pytest rc $? at $SECONDS s"); tail -n 1 pytest.log; pack check
  timeout 60 $b/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 $t --csv ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
  timeout 40 $b/tcgemm-bench --shapes batched --kernels tcgemm --seed 7 $t --csv batched.csv > /dev/null 2>&1 || echo "FAIL batched"
  echo "ragged, batched at $SECONDS s"; pack check
  for tool in memcheck racecheck; do
    TCGEMM_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool $tool $b/tcgemm_gpu_tests --gtest_filter='ProdSweep.SanitizerSubsetIsCorrectAndTouchesOnlyC:ProdChoices.StagedEpilogueSanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep "SUMMARY" $tool.log | tail -n 1
  done ;;
layouts)
  for n in 4096 8192; do
    timeout 70 $b/tcgemm-bench --m $n --n $n --k $n --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr --kernels tcgemm --seed 7 $t --csv layouts-bf16-$n.csv > /dev/null 2>&1 || echo "FAIL layouts $n"
    timeout 30 $b/tcgemm-bench --m $n --n $n --k $n --dtype fp16 --layout tn,ttr --kernels tcgemm --seed 7 $t --csv layouts-fp16-$n.csv > /dev/null 2>&1 || echo "FAIL fp16 $n"
  done
  echo "layouts at $SECONDS s"; pack layouts
  timeout 50 $b/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 || echo "FAIL host"
  echo "host at $SECONDS s"; pack layouts
  timeout $((580 - SECONDS)) $b/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm --seed 7 $t --csv heldout.csv > /dev/null 2>&1 || echo "FAIL heldout bench"
  echo "heldout at $SECONDS s" ;;
esac
gpu $1; pack $1
# probe: the row-class probe alone (its four kinds: ss, rowclass, and each
# half of rowclass beside the aligned form's other half).
if [[ $1 == probe ]]; then
  for a in "--k 4093 --lda 4093" "--k 4096 --lda 4096 --offset 1" "--k 4096 --lda 4096"; do
    timeout 60 $b/tcgemm-rowclass-probe $a --reps 30 >> rowclass-kinds.txt 2>&1 || echo "FAIL rowclass $a" >> rowclass-kinds.txt
  done
  cat rowclass-kinds.txt; pack probe
fi
# h100ab: on an H100, the llm set's tcgemm row with the committed H100
# table (embedded) and with the table `one` tuned there (.carry/h100-new.json),
# one after the other, then the squares the same way while time is left.
if [[ $1 == h100ab ]]; then
  timeout 120 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --csv llm-committed.csv > /dev/null 2>&1 || echo "FAIL llm committed"
  timeout 120 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table h100-new.json --csv llm-new.csv > /dev/null 2>&1 || echo "FAIL llm new"
  echo "llm at $SECONDS s"; pack h100ab
  timeout 60 $b/tcgemm-bench --shapes square --layout tn --kernels tcgemm --seed 7 --csv square-committed.csv > /dev/null 2>&1 || echo "FAIL square committed"
  timeout 60 $b/tcgemm-bench --shapes square --layout tn --kernels tcgemm --seed 7 --tuned-table h100-new.json --csv square-new.csv > /dev/null 2>&1 || echo "FAIL square new"
  echo "square at $SECONDS s"; gpu h100ab; pack h100ab
fi
