// The GemmArgs of one shard GEMM of the tensor-parallel calls (their checks
// and their launches build the same ones).
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstdint>

namespace tcgemm::dist {

inline GemmArgs shard_gemm(std::int64_t m, std::int64_t n, std::int64_t k, MatrixRef a, MatrixRef b,
                           MutableMatrixRef c, float alpha, float beta,
                           cudaStream_t stream = nullptr) {
  GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a;
  g.b = b;
  g.c = c;
  g.alpha = alpha;
  g.beta = beta;
  g.stream = stream;
  return g;
}

}  // namespace tcgemm::dist
