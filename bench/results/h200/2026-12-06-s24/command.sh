#!/bin/bash
# Session 24 (2026-12-06): the device commands, run from the repository root
# as `bash bench/results/h200/2026-12-06-s24/command.sh PART`. The parts are
# session 23's (bench/results/h100/2026-12-06-s23/command.sh); the code is
# unchanged since the build carried then (main cb72e01; later commits touch
# only docs and results), so the same carry is used. README.md says which
# card ran what. Build carried (gitignored, nvcc 13.0, sm_90a,
# Release; packed with `tar cf - DIR | xz -T2 --lzma2=preset=9e,dict=256MiB`):
#   .carry/b23.tar.xz  main at b23/COMMIT: tcgemm-bench, tcgemm-tune,
#                      tcgemm-host-overhead, tcgemm_gpu_tests
# Parts, in the order they are meant to run (the H200 bars were last measured
# on 2026-12-04/05):
#   one       re-tune the standard sets into new.json (llm bf16 tn,tnr;
#             squares bf16 tn,tnr and fp16 tn), then the tcgemm row with it:
#             the llm set beside the copy rates, the squares
#   checksan  the GPU suite but the stream-K tail suites, with the Python
#             package built meanwhile and pytest with a GPU required after
#             it; then memcheck and racecheck on the sanitizer subsets
#   layouts   the eight storage orders at 4096^3 and 8192^3 (bf16; fp16 tn
#             and ttr), the ragged and batched sets, host overhead, the
#             heldout set while time is left (new.json from `one` when it is
#             there)
#   bars      with the built-in tuned table (no re-tune), about 350 s: the
#             copy rate, the llm set (tn, tnr), the bf16 squares, the ragged
#             set
#   quick     for a short budget: the GPU suite but ProdChoices and the
#             stream-K tail suites (about 190 s; no Python), then `san`
#   choices   the ProdChoices suite that `quick` leaves out
#   (Session 24 ran `choices` with a pip build of the working tree's Python
#   package beside it, then pytest, as one command line:
#     ( CMAKE_BUILD_PARALLEL_LEVEL=14 python3 -m pip install --disable-pip-version-check \
#         --no-build-isolation --no-deps --target /tmp/site -Cbuild-dir=/tmp/pybuild . \
#         > .carry/pip.log 2>&1 ) & pid=$!; bash THIS choices; wait $pid
#     PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 150 python3 -m pytest \
#         -p no:cacheprovider -ra -q python/tests > .carry/pytest.log 2>&1
#   The call before it ran `layouts` under `timeout 285`, then `quick`.)
#   first     `one` on an H200; on any other card nothing (session 23's
#             H100 ran this build's `quick` and `choices`)
if [[ $1 == first ]]; then
  # (An H100 ran this build's checksan in session 23: nothing new to learn there.)
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then set -- one; else echo "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader)"; exit 0; fi
  echo "first: $1 on $(nvidia-smi --query-gpu=name --format=csv,noheader)"
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
cd .carry && { [[ -f b23/tcgemm-bench ]] || tar xJf b23.tar.xz; }
b=b23
t=""; [[ -f new.json ]] && t="--tuned-table new.json"  # the table `one` tuned, once it has
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu-$1.txt; }
pack() { tar czf $OUT/s24-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu $1
case $1 in
one)
  timeout 200 $b/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  timeout 80 $b/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out new.json >> tune.log 2>&1
  timeout 50 $b/tcgemm-tune --shapes square --dtype fp16 --layouts tn --out new.json >> tune.log 2>&1
  echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack one
  $b/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 170 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table new.json --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  for mib in 1024 16 56 224; do $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1; done
  echo "llm at $SECONDS s"; gpu one; pack one
  timeout $((585 - SECONDS)) $b/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --tuned-table new.json --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s" ;;
bars)
  for mib in 1024 16 56 224; do $b/tcgemm-host-overhead --copy-rate $mib >> copy-rate.txt 2>&1; done
  timeout 170 $b/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  echo "llm at $SECONDS s"; pack bars
  timeout 100 $b/tcgemm-bench --shapes square --layout tn --dtype bf16 --kernels tcgemm --seed 7 --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s"; pack bars
  timeout $((380 - SECONDS)) $b/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 --csv ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
  echo "ragged at $SECONDS s" ;;
layouts)
  for n in 4096 8192; do
    timeout 70 $b/tcgemm-bench --m $n --n $n --k $n --layout tn,nn,nt,tt,tnr,nnr,ntr,ttr --kernels tcgemm --seed 7 $t --csv layouts-bf16-$n.csv > /dev/null 2>&1 || echo "FAIL layouts $n"
    timeout 30 $b/tcgemm-bench --m $n --n $n --k $n --dtype fp16 --layout tn,ttr --kernels tcgemm --seed 7 $t --csv layouts-fp16-$n.csv > /dev/null 2>&1 || echo "FAIL fp16 $n"
  done
  echo "layouts at $SECONDS s"; pack layouts
  timeout 70 $b/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 $t --csv ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
  timeout 40 $b/tcgemm-bench --shapes batched --kernels tcgemm --seed 7 $t --csv batched.csv > /dev/null 2>&1 || echo "FAIL batched"
  timeout 50 $b/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 || echo "FAIL host"
  echo "ragged, batched, host at $SECONDS s"; gpu layouts; pack layouts
  timeout $((585 - SECONDS)) $b/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm --seed 7 $t --csv heldout.csv > /dev/null 2>&1 || echo "FAIL heldout bench"
  echo "heldout at $SECONDS s" ;;
quick)
  TCGEMM_REQUIRE_GPU=1 timeout 300 $b/tcgemm_gpu_tests --gtest_filter='-EveryConfig/ProdStreamKTail.*:ProdChoices.*' > gpu-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" gpu-suite.log | tail -8; pack quick
  (cd "$repo" && bash bench/results/h200/2026-12-06-s24/command.sh san) ;;
check|checksan)
  ( t0=$SECONDS; CMAKE_BUILD_PARALLEL_LEVEL=12 python3 -m pip install --disable-pip-version-check \
      --no-build-isolation --no-deps --target /tmp/site -Cbuild-dir=/tmp/pybuild "$repo" > pip.log 2>&1
    echo "pip rc $? in $((SECONDS - t0)) s" >> pip.log ) &
  pip_pid=$!
  TCGEMM_REQUIRE_GPU=1 timeout 330 $b/tcgemm_gpu_tests --gtest_filter='-EveryConfig/ProdStreamKTail.*' > gpu-suite.log 2>&1
  echo "suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" gpu-suite.log | tail -8; pack check
  wait $pip_pid; tail -n 1 pip.log
  (cd "$repo" && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 120 python3 -m pytest -p no:cacheprovider -ra -q python/tests > "$repo/.carry/pytest.log" 2>&1; echo "pytest rc $? at $SECONDS s"); tail -n 1 pytest.log
  [[ $1 == checksan ]] && (( SECONDS < 480 )) && (cd "$repo" && bash bench/results/h200/2026-12-06-s24/command.sh san) ;;
choices)
  TCGEMM_REQUIRE_GPU=1 timeout 220 $b/tcgemm_gpu_tests --gtest_filter='ProdChoices.*' > prodchoices.log 2>&1
  echo "rc $?"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" prodchoices.log | tail -6 ;;
san)
  for tool in memcheck racecheck; do
    TCGEMM_SANITIZER=1 TCGEMM_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 97 $b/tcgemm_gpu_tests --gtest_filter='ProdSweep.Sanitizer*:ProdChoices.*SanitizerSubset:ProdRepack.TwoJobsInOneLaunch' > $tool.log 2>&1
    echo "$tool rc $? at $SECONDS s"; grep -E "SUMMARY|^\[  PASSED|^\[  FAILED" $tool.log | tail -n 3
  done ;;
esac
gpu $1; pack $1
