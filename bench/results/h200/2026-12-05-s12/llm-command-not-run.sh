#!/bin/bash
# Session 12, the one H200 command the remaining device time allowed: the llm
# set re-tuned with the one-method sampling (a fresh table, llm only) and the
# tcgemm row against cuBLAS with it (tcgemm-bench --tuned-table), beside the
# copy rate. Build: .carry/s12m (main c9fd90f).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && [[ -d s12m ]] || tar xJf s12m.tar.xz
gpu() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> gpu.txt; }
pack() { tar czf $OUT/h200-s12-llm.tar.gz *.json *.csv *.log *.txt 2>/dev/null; }
gpu
timeout 170 s12m/tcgemm-tune --shapes llm --dtype bf16 --layouts tn,tnr --out llm-table.json > tune.log 2>&1
echo "tune at $SECONDS s"; grep "heuristic vs" tune.log; pack
s12m/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
timeout 170 s12m/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --tuned-table llm-table.json --csv llm.csv > /dev/null 2>&1 || echo "FAIL llm"
s12m/tcgemm-host-overhead --copy-rate 1024 >> copy-rate.txt 2>&1
echo "llm at $SECONDS s"; gpu; pack
