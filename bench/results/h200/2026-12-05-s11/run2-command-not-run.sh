#!/bin/bash
# Session 2026-12-05 (11), device run 2: s11a = main 21d5cdc (tuned table of
# 2026-12-02..04), s11b = the same code with the table re-tuned in run 1 and
# the copy-rate tool rotating its buffers past the L2. The llm set through
# both, the copy rate beside it, then s11b alone: squares bf16/fp16 TN,
# ragged, batched, host overhead, per-CTA timelines; a second llm round
# through both if time is left.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && for t in s11a s11b tr2; do tar xJf $t.tar.xz; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > gpu.txt
pack() { tar czf $OUT/s11-run2.tar.gz s11?-*.csv copy-*.txt host-overhead.txt gpu.txt trace.txt 2>/dev/null; }
llm() { timeout 150 $1/tcgemm-bench --shapes llm --layout tn,tnr --kernels tcgemm --seed 7 --csv $1-llm-r$2.csv > /dev/null 2>&1 || echo "FAIL $1 llm r$2"; echo "$1 llm r$2 at $SECONDS s"; pack; }
s11a/tcgemm-host-overhead --copy-rate 1024 > copy-rate.txt 2>&1
llm s11b 1
llm s11a 1
s11a/tcgemm-host-overhead --copy-rate 1024 >> copy-rate.txt 2>&1
# Copies moving as many bytes as the GEMVs of the llm weights do (the
# weight read once: half of it copied), rotated past the L2.
for mib in 16 56 224; do s11b/tcgemm-host-overhead --copy-rate $mib >> copy-sizes.txt 2>&1; done
timeout 100 s11b/tcgemm-bench --shapes square --layout tn --dtype bf16,fp16 --kernels tcgemm --seed 7 --csv s11b-square.csv > /dev/null 2>&1 || echo "FAIL square"
echo "square at $SECONDS s"; pack
timeout 60 s11b/tcgemm-bench --shapes ragged --kernels tcgemm --seed 7 --csv s11b-ragged.csv > /dev/null 2>&1 || echo "FAIL ragged"
timeout 40 s11b/tcgemm-bench --shapes batched --kernels tcgemm --seed 7 --csv s11b-batched.csv > /dev/null 2>&1 || echo "FAIL batched"
echo "ragged, batched at $SECONDS s"
timeout 60 s11b/tcgemm-host-overhead --shape 1024x1024x1024 --shape 64x4096x4096 > host-overhead.txt 2>&1 || echo "FAIL host"
# Per-CTA timelines (bench/results/h200/2026-12-04-cta-timeline/, its patch on HEAD's kernel.cuh).
for n in 2048 3072 4096; do echo "== M=N=K=$n"; timeout 20 tr2/trace-driver $n $n $n 20; done > trace.txt 2>&1
echo "host, trace at $SECONDS s"; pack
if [[ $SECONDS -lt 290 ]]; then llm s11a 2; llm s11b 2; fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> gpu.txt
pack
cat copy-rate.txt copy-sizes.txt host-overhead.txt | tail -20
