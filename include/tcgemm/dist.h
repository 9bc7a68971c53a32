// Tensor-parallel GEMMs over NCCL, with the communication under the math
// (docs/distributed.md). An optional part of tcgemm: built when CMake finds
// NCCL (the CUDA toolkit's, the nvidia-nccl-cu13 wheel's or Debian's),
// linked as the tcgemm_dist library.
//
// Both operations run a ring over the communicator's P ranks (rank r sends to
// r + 1, receives from r - 1) with NCCL send/receive on a stream of the
// Context, and the shard GEMMs (tcgemm::gemm) on the caller's stream, events
// between the two, so each transfer runs under a GEMM:
//
//   all_gather_gemm      column-parallel layer: A sharded along M (rank r
//                        holds rows [r M_l, (r + 1) M_l)), B this rank's;
//                        C = (all of A) x B. Step 0 multiplies the rank's own
//                        shard while the next one arrives.
//   gemm_reduce_scatter  row-parallel layer: A and B sharded along K;
//                        rank r gets rows [r M_l, (r + 1) M_l) of
//                        sum over ranks of A_r x B_r. Each step computes
//                        the partial product of the row block whose running
//                        sum is in flight towards this rank.
//
// Dtypes: bf16 or fp16 A and B (the same), C bf16, fp16 or fp32, any storage
// orders and leading dimensions tcgemm::gemm takes. The reduce-scatter's
// running sums travel in C's dtype (rounded at each hop, as NCCL's own
// reduce-scatter in that dtype would): pass fp32 C for fp32 sums.
// The work is enqueued on args.stream, which completes after the last
// transfer too; the caller's buffers must stay valid until then. With the
// default DistOptions::check_peers each call first synchronizes the host
// with the Context's stream (see there): turn it off, once the shapes are
// known good, for calls that return as soon as they are enqueued and for
// CUDA graph capture. Every rank must make the same call (what the ring
// moves: shapes, dtype and storage order; alpha for the sums) in the same
// order; check_peers makes a mismatch a clear error on every rank instead of
// a hang or a wrong result. Blocking communicators only (NCCL's default).
#pragma once

#include <cuda_runtime_api.h>
#include <tcgemm/tcgemm.h>

#include <cstddef>
#include <cstdint>
#include <memory>

// NCCL's communicator handle, as nccl.h declares it (this header does not
// need nccl.h; including both is fine).
typedef struct ncclComm* ncclComm_t;

namespace tcgemm::dist {

// One rank's communicator with the stream and events the ring runs on.
// Create one per communicator after ncclCommInitRank; the communicator must
// outlive it. Each call makes the communicator's device current while it
// runs (and restores the caller's); args.stream must belong to that device.
// Not thread-safe: one host thread issues a Context's calls. Move-only.
class Context {
 public:
  // kInvalidValue for a null communicator; kCudaError naming the failed
  // NCCL or CUDA call (ncclCommCount, ncclCommUserRank, ncclCommCuDevice,
  // stream and event creation, the peer-check buffers).
  static Status create(ncclComm_t comm, Context* out);

  Context();
  ~Context();
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  bool valid() const { return state_ != nullptr; }
  int rank() const;
  int size() const;
  int device() const;
  ncclComm_t comm() const;

  struct State;
  State* state() const { return state_.get(); }

 private:
  std::unique_ptr<State> state_;
};

struct DistOptions {
  // Before anything is enqueued, the ranks exchange what they were called
  // with (one small all-gather on the Context's stream, then a host
  // synchronization of that stream, which also waits for the previous
  // call's transfers). A rank whose own checks fail (its arguments, its
  // stream's device, its shard GEMMs as tcgemm::describe sees them, its
  // scratch allocation) returns its own error and every other rank
  // kInvalidValue naming it; ranks that differ from rank 0 in what the ring
  // moves all return kInvalidValue naming the rank and the argument. Nothing
  // else is enqueued then. On a stream being captured into a CUDA graph
  // this is kInvalidValue at once (the synchronization cannot be
  // captured). Every rank must pass the same check_peers. Off,
  // a mismatch is undefined: NCCL may hang or the product be wrong, and a
  // rank that returns an error early leaves the others waiting in the ring.
  bool check_peers = true;
  // Passed to every shard GEMM (a named kernel, batch-invariant mode).
  GemmOptions gemm;
  // The SMs a shard GEMM that runs while a transfer is in flight may use
  // (GemmArgs::sm_count), 0 for all: the production kernels are persistent
  // and fill every SM, so NCCL's kernels may otherwise wait for a GEMM to
  // end. The other shard GEMMs (the all-gather's last, the reduce-scatter's
  // first) use every SM. >= 0; not yet measured (docs/distributed.md).
  // With 0, a shard GEMM whose CTAs wait on each other (a K split reduced
  // in place, a stream-K last round: tcgemm.h, GemmArgs::sm_count) may find
  // some of its CTAs kept off the SMs that NCCL's kernels hold while they
  // wait on a peer, which can wait on that peer's own GEMM: set gemm_sms to
  // leave NCCL its SMs where that may happen. Not observed: no ring of two
  // or more ranks has run yet.
  int gemm_sms = 0;
};

// all_gather_gemm's problem as one rank sees it; P = the communicator's size.
struct AllGatherGemmArgs {
  // Rows of the whole product and of A's shard on every rank: m must be
  // P x m_local (the check that catches a communicator of the wrong size).
  std::int64_t m = 0;
  std::int64_t m_local = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  MatrixRef a_shard;   // m_local x K: rows [rank x m_local, (rank + 1) x m_local) of A
  MatrixRef b;         // K x N (this rank's; e.g. its column shard of the weights)
  MutableMatrixRef c;  // M x N; may be null where alpha == 0 and beta == 1 (as in gemm)
  float alpha = 1.0f;  // C = alpha x A x B + beta x C
  float beta = 0.0f;
  // P x m_local x K elements of A's dtype, 256-byte aligned: receives every
  // rank's shard in rank order, each m_local x K in a_shard's storage order
  // with a tight leading dimension (K row-major, m_local column-major). For
  // row-major A that is the whole gathered A (M x K, ld = K), kept for the
  // backward pass.
  void* gathered_a = nullptr;
  cudaStream_t stream = nullptr;
};

// gemm_reduce_scatter's problem as one rank sees it; P = the communicator's
// size.
struct GemmReduceScatterArgs {
  // Rows of the whole product and of this rank's C: m must be P x m_local
  // (the check that catches a communicator of the wrong size).
  std::int64_t m = 0;
  std::int64_t m_local = 0;
  std::int64_t n = 0;
  std::int64_t k_local = 0;  // this rank's share of K
  MatrixRef a_shard;         // M x K_local: this rank's columns of A
  MatrixRef b_shard;         // K_local x N: this rank's rows of B
  // m_local x N: rows [rank x m_local, (rank + 1) x m_local) of the reduced product,
  // C = alpha x (sum over ranks of A_r x B_r) + beta x C. Written by the
  // ring's last step whatever alpha and beta are where P > 1; with P = 1 as
  // in gemm (null where alpha == 0 and beta == 1).
  MutableMatrixRef c;
  float alpha = 1.0f;
  float beta = 0.0f;
  // Scratch for the ring's running sums (reduce_scatter_workspace_size
  // bytes, 256-byte aligned), not shared with a concurrent call; with less
  // (or none) the call allocates it on args.stream (cudaMallocAsync) and
  // frees it after.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
};

// Errors: kInvalidValue (an argument, named; a mismatch between ranks, with
// check_peers), kNotSupported / kArchMismatch from the shard GEMMs (and from
// all_gather_gemm where a_shard.ld puts its lines further apart than the
// device's pitched copies reach, cudaDevAttrMaxPitch bytes), kCudaError
// naming the NCCL or CUDA call that failed. An error before anything is
// enqueued leaves the caller's memory untouched; a CUDA or NCCL error after
// leaves the ring's later transfers unposted, so the peers wait: abort the
// communicator (ncclCommAbort) as after any failed NCCL call.
Status all_gather_gemm(Context& ctx, const AllGatherGemmArgs& args,
                       const DistOptions& options = {});
Status gemm_reduce_scatter(Context& ctx, const GemmReduceScatterArgs& args,
                           const DistOptions& options = {});

// Bytes of GemmReduceScatterArgs::workspace the call needs: four m_local x N
// buffers of C's dtype (two partial products, two received sums), 0 for one
// rank; SIZE_MAX where that would not fit in 64 bits (validate refuses such
// a problem). Host-only.
std::size_t reduce_scatter_workspace_size(const GemmReduceScatterArgs& args, int ranks);

// The checks each rank makes of its own arguments (no device access, no
// NCCL): kInvalidValue naming the first bad one, given the communicator's
// size. Host-testable.
Status validate(const AllGatherGemmArgs& args, int ranks);
Status validate(const GemmReduceScatterArgs& args, int ranks);

}  // namespace tcgemm::dist
