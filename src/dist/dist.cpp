// The tensor-parallel GEMMs over NCCL (include/tcgemm/dist.h): the rings of
// src/dist/ring.h as NCCL send/receive pairs on the Context's stream and
// shard GEMMs on the caller's, ordered by events.
#include <cuda_runtime.h>
#include <nccl.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dist/add.h"
#include "dist/ring.h"
#include "dist/shard_gemm.h"
#include "tcgemm/dist.h"

namespace tcgemm::dist {
namespace {

// What every rank must agree on, one int64 each (DistOptions::check_peers):
// what the ring moves (the shards of A for all_gather_gemm, the running sums
// of C's blocks for gemm_reduce_scatter) and, for the sums, alpha. What
// stays on a rank (B, its own C, beta, the other dtypes and leading
// dimensions) may differ.
enum Word : int {
  kOp,      // 1 all_gather_gemm, 2 gemm_reduce_scatter
  kValid,   // 1 when the rank's own checks passed
  kRows,    // m_local
  kCols,    // k (all-gather) or n (reduce-scatter)
  kDtype,   // A's (all-gather) or C's (reduce-scatter)
  kLayout,  // A's or C's storage order
  kAlpha,   // reduce-scatter: alpha's bits (all-gather: 0)
  kWords
};
using Descriptor = std::array<std::int64_t, kWords>;

const char* word_name(std::int64_t op, int w) {
  const bool gather = op == 1;
  switch (w) {
    case kOp:
      return "the operation";
    case kValid:
      return "valid arguments";
    case kRows:
      return "m_local";
    case kCols:
      return gather ? "k" : "n";
    case kDtype:
      return gather ? "A's dtype" : "C's dtype";
    case kLayout:
      return gather ? "A's storage order" : "C's storage order";
    default:
      return "alpha";
  }
}

Descriptor descriptor(std::int64_t op, std::int64_t rows, std::int64_t cols, DType moved,
                      Layout layout, float alpha) {
  std::uint32_t alpha_bits = 0;
  std::memcpy(&alpha_bits, &alpha, sizeof alpha_bits);
  return {op,
          1,
          rows,
          cols,
          static_cast<std::int64_t>(moved),
          static_cast<std::int64_t>(layout),
          static_cast<std::int64_t>(alpha_bits)};
}

Status nccl_error(std::string_view op, const char* call, ncclResult_t r) {
  return {StatusCode::kCudaError,
          std::string(op) + ": " + call + " failed: " + ncclGetErrorString(r) +
              (r == ncclInProgress ? " (a non-blocking communicator: tcgemm_dist needs a "
                                     "blocking one, NCCL's default)"
                                   : "")};
}

Status cuda_error(std::string_view op, const char* call, cudaError_t e) {
  return {StatusCode::kCudaError,
          std::string(op) + ": " + call + " failed: " + cudaGetErrorString(e)};
}

#define TCGEMM_DIST_NCCL(op, call)                           \
  do {                                                       \
    if (const ncclResult_t r_ = (call); r_ != ncclSuccess) { \
      return nccl_error(op, #call, r_);                      \
    }                                                        \
  } while (0)
#define TCGEMM_DIST_CUDA(op, call)                          \
  do {                                                      \
    if (const cudaError_t e_ = (call); e_ != cudaSuccess) { \
      return cuda_error(op, #call, e_);                     \
    }                                                       \
  } while (0)

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kFP16:
      return ncclFloat16;
    case DType::kFP32:
      break;
  }
  return ncclFloat32;
}

}  // namespace

struct Context::State {
  ncclComm_t comm = nullptr;
  int rank = 0;
  int size = 1;
  int device = 0;
  cudaStream_t stream = nullptr;  // the ring's transfers
  std::vector<cudaEvent_t> events;
  // The peer check: every rank's descriptor, on the device and pinned.
  std::int64_t* descriptors_device = nullptr;
  std::int64_t* descriptors_host = nullptr;

  ~State() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    if (stream != nullptr) cudaStreamDestroy(stream);
    cudaFree(descriptors_device);
    cudaFreeHost(descriptors_host);
  }

  // Event i (created on first use), for one hand-over between the streams.
  Status event(std::string_view op, std::size_t i, cudaEvent_t* out) {
    while (events.size() <= i) {
      cudaEvent_t e = nullptr;
      TCGEMM_DIST_CUDA(op, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      events.push_back(e);
    }
    *out = events[i];
    return Status::success();
  }

  // An event recorded on `on` now, for a wait enqueued later.
  Status record(std::string_view op, std::size_t i, cudaStream_t on, cudaEvent_t* out) {
    if (Status s = event(op, i, out); !s.ok()) return s;
    TCGEMM_DIST_CUDA(op, cudaEventRecord(*out, on));
    return Status::success();
  }

  // `after` waits for everything enqueued on `before` so far.
  Status order(std::string_view op, std::size_t i, cudaStream_t before, cudaStream_t after) {
    cudaEvent_t e = nullptr;
    if (Status s = event(op, i, &e); !s.ok()) return s;
    TCGEMM_DIST_CUDA(op, cudaEventRecord(e, before));
    TCGEMM_DIST_CUDA(op, cudaStreamWaitEvent(after, e, 0));
    return Status::success();
  }
};

Context::Context() = default;
Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

int Context::rank() const { return state_ ? state_->rank : 0; }
int Context::size() const { return state_ ? state_->size : 0; }
int Context::device() const { return state_ ? state_->device : -1; }
ncclComm_t Context::comm() const { return state_ ? state_->comm : nullptr; }

Status Context::create(ncclComm_t comm, Context* out) {
  constexpr std::string_view kOp = "Context::create";
  if (comm == nullptr) return {StatusCode::kInvalidValue, "Context::create: comm is null"};
  if (out == nullptr) return {StatusCode::kInvalidValue, "Context::create: out is null"};
  auto state = std::make_unique<State>();
  state->comm = comm;
  TCGEMM_DIST_NCCL(kOp, ncclCommCount(comm, &state->size));
  TCGEMM_DIST_NCCL(kOp, ncclCommUserRank(comm, &state->rank));
  TCGEMM_DIST_NCCL(kOp, ncclCommCuDevice(comm, &state->device));
  int caller_device = 0;
  TCGEMM_DIST_CUDA(kOp, cudaGetDevice(&caller_device));
  // The stream and buffers belong to the communicator's device; the
  // caller's current device is restored after.
  TCGEMM_DIST_CUDA(kOp, cudaSetDevice(state->device));
  const std::size_t bytes = sizeof(Descriptor) * static_cast<std::size_t>(state->size);
  cudaError_t e = cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking);
  const char* call = "cudaStreamCreateWithFlags";
  if (e == cudaSuccess) {
    e = cudaMalloc(&state->descriptors_device, bytes);
    call = "cudaMalloc";
  }
  if (e == cudaSuccess) {
    e = cudaMallocHost(&state->descriptors_host, bytes);
    call = "cudaMallocHost";
  }
  // The events the longer ring (gemm_reduce_scatter: 2P - 1) uses, made now
  // so that no creation can fail in the middle of a ring.
  for (int i = 0; e == cudaSuccess && i < 2 * state->size + 2; ++i) {
    cudaEvent_t ev = nullptr;
    e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    call = "cudaEventCreateWithFlags";
    if (e == cudaSuccess) state->events.push_back(ev);
  }
  cudaSetDevice(caller_device);
  if (e != cudaSuccess) return cuda_error(kOp, call, e);
  out->state_ = std::move(state);
  return Status::success();
}

namespace {

// DistOptions::check_peers: all-gathers every rank's descriptor and compares
// each with rank 0's; every rank sees the same table. A rank whose own
// checks failed returns its own error; the others name the first rank that
// failed, else the first that differs from rank 0.
Status check_peers(std::string_view op, Context::State& st, const Descriptor& mine,
                   const Status& local) {
  std::memcpy(st.descriptors_host + static_cast<std::size_t>(st.rank) * kWords, mine.data(),
              sizeof(Descriptor));
  std::int64_t* const my_slot = st.descriptors_device + static_cast<std::size_t>(st.rank) * kWords;
  TCGEMM_DIST_CUDA(op, cudaMemcpyAsync(my_slot, mine.data(), sizeof(Descriptor),
                                       cudaMemcpyHostToDevice, st.stream));
  TCGEMM_DIST_NCCL(
      op, ncclAllGather(my_slot, st.descriptors_device, kWords, ncclInt64, st.comm, st.stream));
  TCGEMM_DIST_CUDA(op, cudaMemcpyAsync(st.descriptors_host, st.descriptors_device,
                                       sizeof(Descriptor) * static_cast<std::size_t>(st.size),
                                       cudaMemcpyDeviceToHost, st.stream));
  TCGEMM_DIST_CUDA(op, cudaStreamSynchronize(st.stream));
  const auto word = [&](int rank, int w) { return st.descriptors_host[rank * kWords + w]; };
  // This rank's own failure first (its own error, whatever other ranks
  // report), then the first other rank that failed its checks.
  if (word(st.rank, kValid) == 0) return local;
  for (int r = 0; r < st.size; ++r) {
    if (word(r, kValid) == 0) {
      return {StatusCode::kInvalidValue, std::string(op) + ": rank " + std::to_string(r) +
                                             " failed its own checks (its arguments, or "
                                             "resources it could not get); see its status"};
    }
  }
  // A word as the message shows it (alpha as the float it holds).
  const auto shown = [&](int rank, int w) {
    if (w != kAlpha) return std::to_string(word(rank, w));
    const auto bits = static_cast<std::uint32_t>(word(rank, w));
    float alpha = 0.0f;
    std::memcpy(&alpha, &bits, sizeof alpha);
    char text[32];  // every digit a float holds: 1e-7 and 2e-7 differ
    std::snprintf(text, sizeof text, "%.9g", alpha);
    return std::string(text);
  };
  for (int r = 1; r < st.size; ++r) {
    for (int w = 0; w < kWords; ++w) {
      if (word(r, w) != word(0, w)) {
        return {StatusCode::kInvalidValue,
                std::string(op) + ": ranks disagree on " + word_name(mine[kOp], w) + ": rank " +
                    std::to_string(r) + " has " + shown(r, w) + ", rank 0 " + shown(0, w)};
      }
    }
  }
  return Status::success();
}

// The local checks, then (with check_peers) the ranks' verdict.
Status agree(std::string_view op, Context& ctx, const DistOptions& options, Status local,
             Descriptor mine) {
  if (!options.check_peers) return local;
  mine[kValid] = local.ok() ? 1 : 0;
  return check_peers(op, *ctx.state(), mine, local);
}

// The shard GEMMs' own verdicts (tcgemm::describe: host-side, no launch),
// for every shard a rank will run: their pointers and leading dimensions
// differ from block to block, and a rank must not find out in the middle
// of the ring, where its peers would wait for it.
Status check_shards(std::string_view op, const std::vector<GemmArgs>& shards,
                    const GemmOptions& options) {
  for (const GemmArgs& g : shards) {
    Status s = describe(g, options).status;
    if (!s.ok()) {
      s.message = std::string(op) + ": a shard GEMM: " + s.message;
      return s;
    }
  }
  return Status::success();
}

std::int64_t tight_ld(Layout layout, std::int64_t rows, std::int64_t cols) {
  return layout == Layout::kRowMajor ? cols : rows;
}

const void* offset(const void* p, std::int64_t elements, DType t) {
  return static_cast<const char*>(p) + elements * static_cast<std::int64_t>(size_of(t));
}

void* offset(void* p, std::int64_t elements, DType t) {
  return static_cast<char*>(p) + elements * static_cast<std::int64_t>(size_of(t));
}

// Makes the Context's device current for one call, and restores the
// caller's after.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&caller_) == cudaSuccess && caller_ != device) {
      set_ = cudaSetDevice(device) == cudaSuccess;
    }
  }
  ~DeviceScope() {
    if (set_) cudaSetDevice(caller_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int caller_ = 0;
  bool set_ = false;
};

// The caller's stream belongs to the Context's device (a rank's own check,
// part of the exchange's verdict).
Status check_stream_device(std::string_view op, const Context::State& st, cudaStream_t stream) {
  if (stream == nullptr) return Status::success();
  int device = -1;
  if (cudaStreamGetDevice(stream, &device) != cudaSuccess || device != st.device) {
    cudaGetLastError();
    return {StatusCode::kInvalidValue, std::string(op) +
                                           ": stream is not a stream of the communicator's "
                                           "device " +
                                           std::to_string(st.device)};
  }
  return Status::success();
}

// check_peers' host synchronization cannot be captured into a CUDA graph:
// such a call is refused before the exchange (every rank of a captured
// step is being captured alike).
Status check_capture(std::string_view op, cudaStream_t stream, const DistOptions& options) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (options.check_peers && cudaStreamIsCapturing(stream, &capture) == cudaSuccess &&
      capture != cudaStreamCaptureStatusNone) {
    return {StatusCode::kInvalidValue,
            std::string(op) +
                ": check_peers synchronizes the host, which a stream being "
                "captured into a CUDA graph cannot: turn it off to capture"};
  }
  return Status::success();
}

// A rank's own checks beyond its arguments' (`validated`): the options and
// its stream's device.
Status check_rank(std::string_view op, const Context::State& st, cudaStream_t stream,
                  const DistOptions& options, Status validated) {
  if (!validated.ok()) return validated;
  if (options.gemm_sms < 0) {
    return {StatusCode::kInvalidValue,
            std::string(op) + ": gemm_sms=" + std::to_string(options.gemm_sms) + " is negative"};
  }
  return check_stream_device(op, st, stream);
}

// How all_gather_gemm copies the rank's own shard into gathered_a: as one
// block, or as a pitched copy of `lines` lines of `line` elements.
struct ShardCopy {
  std::int64_t line;   // elements of a line: K row-major, m_local column-major
  std::int64_t lines;  // the other extent
  bool one_block;      // lines back to back (or one line: ld is never read)
};

ShardCopy shard_copy(const AllGatherGemmArgs& args) {
  const bool row_major = args.a_shard.layout == Layout::kRowMajor;
  const std::int64_t line = row_major ? args.k : args.m_local;
  const std::int64_t lines = row_major ? args.m_local : args.k;
  return {line, lines, lines == 1 || args.a_shard.ld == line};
}

// A pitched shard copy's pitch and width within what the device's copies
// take (cudaDevAttrMaxPitch, bytes), else kNotSupported naming a_shard.ld,
// on this rank before the ranks agree, so that no rank starts a ring
// another leaves.
Status check_shard_copy(std::string_view op, int device, const AllGatherGemmArgs& args) {
  const auto [line, lines, one_block] = shard_copy(args);
  if (one_block) return Status::success();
  int max_pitch = 0;
  TCGEMM_DIST_CUDA(op, cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device));
  const auto element = static_cast<std::int64_t>(size_of(args.a_shard.dtype));
  std::int64_t pitch = 0;
  if (__builtin_mul_overflow(args.a_shard.ld, element, &pitch) || pitch > max_pitch ||
      line * element > max_pitch) {
    return {StatusCode::kNotSupported,
            std::string(op) + ": a_shard.ld=" + std::to_string(args.a_shard.ld) +
                " makes the copy of the own shard into gathered_a a pitched copy of lines " +
                std::to_string(args.a_shard.ld) + " elements apart, past the " +
                std::to_string(max_pitch) + " bytes the device's copies take (lines " +
                std::to_string(line) + " elements long, " + std::to_string(lines) + " of them)"};
  }
  return Status::success();
}

// One step's transfers: send `count` elements to the next rank, receive as
// many from the previous, as one NCCL group (always closed).
Status post_pair(std::string_view op, Context::State& st, const void* send, void* receive,
                 std::size_t count, DType dtype) {
  const int next = ring_next(st.rank, st.size);
  const int prev = ring_prev(st.rank, st.size);
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return nccl_error(op, "ncclGroupStart", r);
  r = ncclSend(send, count, nccl_type(dtype), next, st.comm, st.stream);
  if (r == ncclSuccess) r = ncclRecv(receive, count, nccl_type(dtype), prev, st.comm, st.stream);
  const ncclResult_t end = ncclGroupEnd();
  if (r != ncclSuccess) return nccl_error(op, "ncclSend/ncclRecv", r);
  if (end != ncclSuccess) return nccl_error(op, "ncclGroupEnd", end);
  return Status::success();
}

}  // namespace

Status all_gather_gemm(Context& ctx, const AllGatherGemmArgs& args, const DistOptions& options) {
  constexpr std::string_view kOp = "all_gather_gemm";
  if (!ctx.valid()) return {StatusCode::kInvalidValue, "all_gather_gemm: ctx is not created"};
  Context::State& st = *ctx.state();
  const DeviceScope scope(st.device);
  const int p = st.size;
  const int r = st.rank;
  const DType in = args.a_shard.dtype;
  const std::int64_t shard_elements = args.m_local * args.k;
  const Layout a_layout = args.a_shard.layout;
  const std::int64_t slot_ld = tight_ld(a_layout, args.m_local, args.k);
  const auto slot = [&](int s) { return offset(args.gathered_a, s * shard_elements, in); };
  // The shard GEMM of step `step` (A from `a`, shard s): its rows of C, on
  // gemm_sms SMs while a transfer runs beside it (every step but the last).
  const auto shard = [&](MatrixRef a, int s, int step) {
    MutableMatrixRef c = args.c;
    if (c.ptr != nullptr) {  // (null: alpha 0, beta 1, C untouched)
      c.ptr =
          offset(args.c.ptr,
                 row_block_offset(args.c.layout == Layout::kRowMajor, args.c.ld, s * args.m_local),
                 args.c.dtype);
    }
    GemmArgs g =
        shard_gemm(args.m_local, args.n, args.k, a, args.b, c, args.alpha, args.beta, args.stream);
    if (step + 1 < p) g.sm_count = options.gemm_sms;
    return g;
  };
  const auto slot_view = [&](int s) { return MatrixRef{slot(s), in, a_layout, slot_ld, 0}; };

  if (Status s = check_capture(kOp, args.stream, options); !s.ok()) return s;
  Status local = check_rank(kOp, st, args.stream, options, validate(args, p));
  if (local.ok()) {
    std::vector<GemmArgs> shards{shard(args.a_shard, r, 0)};
    for (int step = 1; step < p; ++step) {
      const int s = gather_shard_at(r, p, step);
      shards.push_back(shard(slot_view(s), s, step));
    }
    local = check_shards(kOp, shards, options.gemm);
  }
  if (local.ok()) local = check_shard_copy(kOp, st.device, args);
  const Descriptor mine = descriptor(1, args.m_local, args.k, in, a_layout, 0.0f);
  if (Status s = agree(kOp, ctx, options, local, mine); !s.ok()) return s;

  std::size_t event = 0;
  // The ring's stream starts after what the caller enqueued before (A's
  // shard, gathered_a's last readers).
  if (Status s = st.order(kOp, event++, args.stream, st.stream); !s.ok()) return s;
  const auto ring = [&]() -> Status {
    // The rank's own shard into its slot, tight, for the ring to forward:
    // one block, or a pitched copy (its pitch checked against the device's
    // limit with the rank's other checks).
    const auto [line, lines, one_block] = shard_copy(args);
    const auto width = static_cast<std::size_t>(line) * size_of(in);
    if (one_block) {
      TCGEMM_DIST_CUDA(kOp, cudaMemcpyAsync(slot(r), args.a_shard.ptr,
                                            width * static_cast<std::size_t>(lines),
                                            cudaMemcpyDeviceToDevice, st.stream));
    } else {
      TCGEMM_DIST_CUDA(kOp, cudaMemcpy2DAsync(slot(r), width, args.a_shard.ptr,
                                              static_cast<std::size_t>(args.a_shard.ld) *
                                                  size_of(in),
                                              width, static_cast<std::size_t>(lines),
                                              cudaMemcpyDeviceToDevice, st.stream));
    }
    // Step 0: the own shard, from the caller's memory, under the first
    // transfer.
    if (Status s = gemm(shard(args.a_shard, r, 0), options.gemm); !s.ok()) return s;
    for (int step = 0; step + 1 < p; ++step) {
      const int arriving = gather_shard_arriving(r, p, step);
      Status s = post_pair(kOp, st, slot(gather_shard_at(r, p, step)), slot(arriving),
                           static_cast<std::size_t>(shard_elements), in);
      if (s.ok()) s = st.order(kOp, event++, st.stream, args.stream);
      if (s.ok()) s = gemm(shard(slot_view(arriving), arriving, step + 1), options.gemm);
      if (!s.ok()) return s;
    }
    return Status::success();
  };
  const Status status = ring();
  // args.stream completes after the ring's last transfer (the copy-in at
  // P = 1), on an error too: nothing the call posted outlives it.
  const Status join = st.order(kOp, event++, st.stream, args.stream);
  if (!join.ok()) cudaStreamSynchronize(st.stream);  // no event to join by: wait here
  return status.ok() ? join : status;
}

Status gemm_reduce_scatter(Context& ctx, const GemmReduceScatterArgs& args,
                           const DistOptions& options) {
  constexpr std::string_view kOp = "gemm_reduce_scatter";
  if (!ctx.valid()) {
    return {StatusCode::kInvalidValue, "gemm_reduce_scatter: ctx is not created"};
  }
  Context::State& st = *ctx.state();
  const DeviceScope scope(st.device);
  const int p = st.size;
  const int r = st.rank;
  const std::int64_t m_local = args.m_local;
  const DType out = args.c.dtype;
  const bool a_row_major = args.a_shard.layout == Layout::kRowMajor;
  // The partial product of row block b, into `c`, on `sms` SMs (0: all).
  const auto block_gemm = [&](int b, MutableMatrixRef c, float beta, int sms) {
    MatrixRef a = args.a_shard;
    // (With alpha 0 A is never read, nor its span checked: no offset.)
    if (args.alpha != 0.0f) {
      a.ptr = offset(args.a_shard.ptr, row_block_offset(a_row_major, args.a_shard.ld, b * m_local),
                     args.a_shard.dtype);
    }
    GemmArgs g = shard_gemm(m_local, args.n, args.k_local, a, args.b_shard, c, args.alpha, beta,
                            args.stream);
    g.sm_count = sms;
    return g;
  };
  // Steps after the first run while the previous step's sum travels.
  const auto step_sms = [&](int step) { return step > 0 ? options.gemm_sms : 0; };
  // Scratch: partial products in slots 0, 1; received sums in slots 2, 3;
  // each m_local x N in C's storage order, tight. (The shard checks need
  // only the slots' alignment: a stand-in base of the workspace's.)
  const std::size_t need = reduce_scatter_workspace_size(args, p);
  const std::size_t buffer_bytes = need / 4;
  const std::int64_t ld = tight_ld(args.c.layout, m_local, args.n);
  const auto tight = [&](void* ptr) { return MutableMatrixRef{ptr, out, args.c.layout, ld, 0}; };

  if (Status s = check_capture(kOp, args.stream, options); !s.ok()) return s;
  Status local = check_rank(kOp, st, args.stream, options, validate(args, p));
  if (local.ok()) {
    std::vector<GemmArgs> shards;
    if (p == 1) {
      shards.push_back(block_gemm(r, args.c, args.beta, 0));
    } else {
      void* const stand_in = reinterpret_cast<void*>(kWorkspaceAlignment);
      for (int step = 0; step < p; ++step) {
        shards.push_back(
            block_gemm(scatter_block_at(r, p, step), tight(stand_in), 0.0f, step_sms(step)));
      }
    }
    local = check_shards(kOp, shards, options.gemm);
  }
  // The scratch before the exchange, so that a rank out of memory says so
  // to the others instead of leaving them in the ring.
  void* scratch = args.workspace;
  void* owned = nullptr;
  if (local.ok() && p > 1 && args.workspace_bytes < need) {
    if (const cudaError_t e = cudaMallocAsync(&owned, need, args.stream); e != cudaSuccess) {
      cudaGetLastError();
      owned = nullptr;
      local = cuda_error(kOp, "cudaMallocAsync", e);
    }
    scratch = owned;
  }
  const Descriptor mine = descriptor(2, m_local, args.n, out, args.c.layout, args.alpha);
  if (Status s = agree(kOp, ctx, options, local, mine); !s.ok()) {
    if (owned != nullptr) cudaFreeAsync(owned, args.stream);
    return s;
  }
  if (p == 1) return gemm(block_gemm(r, args.c, args.beta, 0), options.gemm);

  const auto buffer = [&](int i) { return static_cast<char*>(scratch) + i * buffer_bytes; };
  const std::int64_t inner = args.c.layout == Layout::kRowMajor ? args.n : m_local;
  const std::int64_t outer = args.c.layout == Layout::kRowMajor ? m_local : args.n;
  const auto count = static_cast<std::size_t>(m_local * args.n);

  std::size_t event = 0;
  const auto ring = [&]() -> Status {
    if (Status s = st.order(kOp, event++, args.stream, st.stream); !s.ok()) return s;
    cudaEvent_t received_event = nullptr;  // step - 1's transfers done
    for (int step = 0; step < p; ++step) {
      void* const partial = buffer(scatter_slot(step));
      // Under the previous step's transfers.
      if (Status s =
              gemm(block_gemm(scatter_block_at(r, p, step), tight(partial), 0.0f, step_sms(step)),
                   options.gemm);
          !s.ok()) {
        return s;
      }
      if (step > 0) {
        // The running sum of this block, from r - 1 at step - 1. (Waiting
        // here also orders the next GEMM into the other partial slot after
        // that slot's send, part of the same transfers.)
        TCGEMM_DIST_CUDA(kOp, cudaStreamWaitEvent(args.stream, received_event, 0));
        void* const received = buffer(2 + scatter_slot(step - 1));
        // The last step: this rank's own block, into C (beta x C added).
        const Status s = step + 1 < p ? add_lines(out, partial, inner, partial, received, inner,
                                                  outer, 0.0f, args.stream)
                                      : add_lines(out, args.c.ptr, args.c.ld, partial, received,
                                                  inner, outer, args.beta, args.stream);
        if (!s.ok()) return s;
      }
      if (step + 1 < p) {
        // Send the running sum on and receive the next block's from r - 1,
        // once the sum is ready (and the receive slot's last reader, two
        // steps back, is done).
        Status s = st.order(kOp, event++, args.stream, st.stream);
        if (s.ok()) s = post_pair(kOp, st, partial, buffer(2 + scatter_slot(step)), count, out);
        if (s.ok()) s = st.record(kOp, event++, st.stream, &received_event);
        if (!s.ok()) return s;
      }
    }
    return Status::success();
  };
  Status status = ring();
  // args.stream completes after every transfer the call posted, on an error
  // too, so that the scratch is freed (and the caller's buffers released)
  // only after NCCL is done with them.
  if (Status join = st.order(kOp, event++, st.stream, args.stream); !join.ok()) {
    // No event to join by: wait for the ring on the host instead.
    cudaStreamSynchronize(st.stream);
    if (status.ok()) status = join;
  }
  if (owned != nullptr) {
    if (const cudaError_t e = cudaFreeAsync(owned, args.stream); e != cudaSuccess && status.ok()) {
      status = cuda_error(kOp, "cudaFreeAsync", e);
    }
  }
  return status;
}

}  // namespace tcgemm::dist
