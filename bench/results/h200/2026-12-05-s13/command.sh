#!/bin/bash
# Session 13 (2026-12-05): the H200 commands composed this session (none ran:
# no device was lent). The longer parts (tune, bench, tests, skinny,
# heldout, the branches') stay in ../2026-12-05-s12/command-not-run.sh.
# Build carried: .carry/s13m.tar.xz = main 1d300e9 (gitignored; Release,
# sm_90a, `cmake --build --preset release --target tcgemm-bench tcgemm-tune
# tcgemm-host-overhead tcgemm_gpu_tests`, the four binaries tarred).
#   bash THIS one      re-tune llm and squares into new.json, then the tcgemm
#                      row against cuBLAS with it (llm beside the copy rate,
#                      squares), in one 600-second command
#   bash THIS final    the GPU suite, the Python package built meanwhile and
#                      pytest, the heldout set's tcgemm row
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
cd .carry && [[ -d s13m ]] || tar xJf s13m.tar.xz
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu.txt; }
pack() { tar czf $OUT/s13-$1.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu
case $1 in
one)
  # Everything of tune and bench that one 600-second command holds, for a
  # session that may get one machine once: the re-tuned table (llm, squares)
  # and the tcgemm row against cuBLAS with it on the llm set and squares.
  timeout 200 s13m/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out new.json > tune.log 2>&1
  timeout 80 s13m/tcgemm-tune --shapes square --dtype bf16 --layouts tn,tnr --out new.json >> tune.log 2>&1
  timeout 50 s13m/tcgemm-tune --shapes square --dtype fp16 --layouts tn --out new.json >> tune.log 2>&1
  echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack one
  s13m/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
  timeout 150 s13m/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table new.json --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
  s13m/tcgemm-host-overhead --copy-rate 1024 >> copy-rate.txt 2>&1
  echo "llm at $SECONDS s"; gpu; pack one
  timeout $((585 - SECONDS)) s13m/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --tuned-table new.json --csv square.csv > /dev/null 2>&1 || echo "FAIL square"
  echo "square at $SECONDS s" ;;
final)
  # The GPU suite on main (the Python package of this tree building on the
  # CPUs meanwhile), pytest, then the tcgemm row on the heldout set (no
  # tuned table holds it: the heuristic's choices) against cuBLAS.
  ( t0=$SECONDS; CMAKE_BUILD_PARALLEL_LEVEL=14 python3 -m pip install --disable-pip-version-check \
      --no-build-isolation --no-deps --target /tmp/site -Cbuild-dir=/tmp/pybuild "$repo" > pip.log 2>&1
    echo "pip rc $? in $((SECONDS - t0)) s" >> pip.log ) &
  pip_pid=$!
  TCGEMM_REQUIRE_GPU=1 timeout 300 s13m/tcgemm_gpu_tests --gtest_filter='-ProdChoices.StreamKTailIsCorrectOnEveryConfig:ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > main-gpu-suite.log 2>&1
  echo "main suite rc $? at $SECONDS s"; grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]" main-gpu-suite.log | tail -5; pack final
  wait $pip_pid; tail -1 pip.log
  (cd "$repo" && PYTHONPATH=/tmp/site TCGEMM_REQUIRE_GPU=1 timeout 120 python3 -m pytest -p no:cacheprovider -ra -q python/tests > "$repo/.carry/pytest.log" 2>&1; echo "pytest rc $? at $SECONDS s"); tail -3 pytest.log; pack final
  timeout $((580 - SECONDS)) s13m/tcgemm-bench --shapes heldout --layout tn,tnr --kernels tcgemm --seed 7 --csv heldout.csv > /dev/null 2>&1 || echo "FAIL heldout bench"
  echo "heldout bench at $SECONDS s" ;;
esac
gpu; pack $1
