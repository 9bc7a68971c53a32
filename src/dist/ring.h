// The ring schedules of the tensor-parallel GEMMs (include/tcgemm/dist.h) and
// the geometry of their shards: plain host arithmetic, no NCCL and no CUDA,
// so that the host tests check it on any machine.
//
// P ranks in a ring, rank r sending to r + 1 and receiving from r - 1 (mod P).
//
// all_gather_gemm (A sharded along M: rank r holds rows [r M_l, (r + 1) M_l)):
//   step s = 0 .. P - 1, rank r multiplies shard (r - s) mod P into its rows
//   of C. Under step s < P - 1 it forwards that same shard to r + 1 and
//   receives shard (r - s - 1) mod P from r - 1, the one step s + 1
//   multiplies. Step 0's shard is the rank's own: the first GEMM needs no
//   transfer, and every transfer runs under a GEMM.
//
// gemm_reduce_scatter (A and B sharded along K; rank r ends with rows
// [r M_l, (r + 1) M_l) of sum over ranks of A_r B_r):
//   step s = 0 .. P - 1, rank r computes its partial product for row block
//   (r - s - 1) mod P. From step 1 on it adds the running sum of that block
//   that r - 1 sent (r - 1 computed it at step s - 1: the same block), and
//   under step s + 1's GEMM sends the sum on to r + 1. Block b's sum thus
//   starts at rank b + 1 and ends, after P - 1 hops, at rank b (step P - 1),
//   which adds its own partial last and writes its C.
#pragma once

#include <cstdint>

namespace tcgemm::dist {

// x mod p in [0, p) for any x (p > 0).
constexpr int ring_mod(std::int64_t x, int p) {
  const std::int64_t r = x % p;
  return static_cast<int>(r < 0 ? r + p : r);
}

// The ranks a rank sends to and receives from.
constexpr int ring_next(int rank, int size) { return ring_mod(rank + 1, size); }
constexpr int ring_prev(int rank, int size) { return ring_mod(rank - 1, size); }

// all_gather_gemm: the shard rank `rank` multiplies at step `step`.
constexpr int gather_shard_at(int rank, int size, int step) { return ring_mod(rank - step, size); }

// all_gather_gemm: the shard that arrives under step `step` (step < size - 1),
// the one step + 1 multiplies.
constexpr int gather_shard_arriving(int rank, int size, int step) {
  return gather_shard_at(rank, size, step + 1);
}

// gemm_reduce_scatter: the row block rank `rank` computes at step `step`;
// at the last step (size - 1) it is the rank's own block.
constexpr int scatter_block_at(int rank, int size, int step) {
  return ring_mod(rank - step - 1, size);
}

// A row block of a matrix: `rows` rows starting at `row0`, as an element
// offset from the matrix's first element for its storage order (row-major:
// rows are ld apart; column-major: a row is one element further).
constexpr std::int64_t row_block_offset(bool row_major, std::int64_t ld, std::int64_t row0) {
  return row_major ? row0 * ld : row0;
}

// The double buffers of the reduce-scatter ring: step s writes its partial
// into slot s % 2 and receives into slot s % 2 of the receive pair, so a
// slot is rewritten two steps after it was last read.
constexpr int scatter_slot(int step) { return step % 2; }

// A whole M x N x K projection split over `ranks` GPUs (tensor
// parallelism), as each rank's arguments see it; valid only when the split
// dimensions divide (divides()).
struct RankShape {
  std::int64_t m = 0;  // all_gather_gemm: m_local; gemm_reduce_scatter: the whole M
  std::int64_t n = 0;  // this rank's columns of B and C (all of N for reduce-scatter)
  std::int64_t k = 0;  // all of K (all-gather) or k_local (reduce-scatter)
  bool divides = false;
};

// Column-parallel: A's rows and B's (the weights') columns are sharded.
constexpr RankShape column_parallel(std::int64_t m, std::int64_t n, std::int64_t k, int ranks) {
  if (ranks < 1) return {};
  return {m / ranks, n / ranks, k, m % ranks == 0 && n % ranks == 0};
}

// Row-parallel: K is sharded (A's columns, B's rows); C's rows are scattered.
constexpr RankShape row_parallel(std::int64_t m, std::int64_t n, std::int64_t k, int ranks) {
  if (ranks < 1) return {};
  return {m, n, k / ranks, m % ranks == 0 && k % ranks == 0};
}

}  // namespace tcgemm::dist
