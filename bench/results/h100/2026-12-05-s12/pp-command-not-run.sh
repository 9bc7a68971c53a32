#!/bin/bash
# Session 12 on an H100: the ping-pong row (next/pingpong, build .carry/s12p
# = 671951e) timed by tcgemm-tune against every other candidate on mid-size
# problems, where its epilogue overlap should matter most.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export PATH=/usr/local/cuda/bin:$PATH
cd .carry && [[ -d s12p ]] || tar xJf s12p.tar.xz
timeout 200 s12p/tcgemm-tune --shape 512x4096x4096,1024x4096x4096,512x14336x4096,1024x14336x4096,512x4096x14336,1024x4096x14336,512x28672x8192,256x8192x28672,1024x1024x1024,2048x2048x2048,3072x3072x3072,4096x4096x4096 --layouts tn --out pp.json > pp-tune.log 2>&1
echo "pp tune rc $? at $SECONDS s"; grep -c '"prod-64x256-pp"' pp.json
tar czf $OUT/h100-s12-pp.tar.gz pp.json pp-tune.log
