#!/bin/bash
# Session 2026-12-05 (11), device run 1: s11a = main 21d5cdc. A fresh tuned
# table with HEAD's kernels (scripts/tune-h200: llm bf16 tn,tnr with the
# resume check, squares bf16 tn,tnr, squares fp16 tn), then
# ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig alone.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
repo=$PWD
cd .carry && tar xJf s11a.tar.xz
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
mkdir -p $OUT/tune
timeout 330 "$repo"/scripts/tune-h200 s11a $OUT/tune > /dev/null 2>&1
echo "tune rc $? at $SECONDS s"
tail -12 $OUT/tune/tune-report.txt
rest=$((585 - SECONDS))
TCGEMM_REQUIRE_GPU=1 timeout $rest s11a/tcgemm_gpu_tests --gtest_filter='ProdChoices.StreamKWidenedTailIsCorrectOnEveryConfig' > $OUT/stream-k-widened.log 2>&1
echo "widened rc $? at $SECONDS s ($rest s allowed)"; grep -E "OK \]|FAILED|PASSED" $OUT/stream-k-widened.log | tail -3
