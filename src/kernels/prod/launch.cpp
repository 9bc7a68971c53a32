// Host side of the production family: a problem from the API becomes one
// launch of one instance. Canonicalize (problem.cpp), pick the config, repack
// the operands TMA cannot address into scratch (the caller's workspace when
// it is large enough, else stream-ordered memory freed after the launch),
// encode the three tensor maps, then launch the instance.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/prod/launch.h"
#include "kernels/prod/params.h"
#include "kernels/prod/problem.h"
#include "kernels/prod/repack.h"
#include "kernels/prod/split_k.h"
#include "sched/hilbert.h"
#include "sched/tile_order.h"
#include "tensor_map.h"
#include "tuned/tuned.h"

namespace tcgemm::kernels {
namespace {

using tcgemm::prod::EpiloguePath;
using tcgemm::prod::kChunk;
using tcgemm::prod::kConfigs;
using tcgemm::prod::kCRows;
using tcgemm::prod::Major;
using tcgemm::prod::OperandPath;
using tcgemm::prod::OperandView;
using tcgemm::prod::Problem;

using tcgemm::prod::Choice;

using tcgemm::prod::HeuristicKey;

// The heuristic's picks, remembered: select() scores every candidate in both
// orientations (a few microseconds of host time), and a problem the tuned
// table lacks would pay that on every call. At most kEntries problems; a
// full cache starts over. One mutex: a lookup holds it for a hash and a
// probe.
class HeuristicCache {
 public:
  std::optional<Choice> find(const HeuristicKey& key) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = picks_.find(key);
    if (it == picks_.end()) return std::nullopt;
    return it->second;
  }
  void remember(const HeuristicKey& key, const Choice& choice) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (picks_.size() >= kEntries) picks_.clear();
    picks_.emplace(key, choice);
  }

 private:
  static constexpr std::size_t kEntries = 4096;
  std::mutex mutex_;
  std::unordered_map<HeuristicKey, Choice, tcgemm::prod::HeuristicKeyHash> picks_;
};

HeuristicCache& heuristic_cache() {
  static HeuristicCache cache;
  return cache;
}

// The choice `config` names (its best split, in the native orientation), or
// the dispatcher's when it is kAutoConfig: the tuned table's entry for the
// problem if it has one, else the heuristic's over both orientations
// (kInvariantConfig: the batch-invariant pick, never the table's, whose
// entries depend on M), remembered per problem (HeuristicKey).
Status resolve(const GemmArgs& args, int config, Choice* choice) {
  if (config == kAutoConfig) {
    if (const std::optional<Choice> tuned = tcgemm::tuned::lookup_current_device(args)) {
      *choice = *tuned;
      return Status::success();
    }
  }
  // The device once: its model (cached per device) for the heuristic, its
  // ordinal for the key.
  tcgemm::prod::DeviceModel whole;
  if (Status s = prod::device_model(&whole); !s.ok()) return s;
  int device = 0;
  static_cast<void>(cudaGetDevice(&device));  // succeeded just now, in device_model
  const HeuristicKey key = tcgemm::prod::heuristic_key(args, device, config, whole.sm_count);
  if (const std::optional<Choice> remembered = heuristic_cache().find(key)) {
    *choice = *remembered;
    return Status::success();
  }
  const tcgemm::prod::DeviceModel model = tcgemm::prod::budgeted(whole, args.sm_count);
  if (config >= 0) {
    *choice = tcgemm::prod::select_split(tcgemm::prod::canonicalize(args), model, config);
  } else {
    *choice = tcgemm::prod::select(args, model, config == kInvariantConfig);
  }
  heuristic_cache().remember(key, *choice);
  return Status::success();
}

const prod::InstanceTable& instances(DType in, DType out) {
  if (in == DType::kBF16) {
    return out == DType::kBF16   ? prod::instances_bf16_bf16()
           : out == DType::kFP16 ? prod::instances_bf16_fp16()
                                 : prod::instances_bf16_fp32();
  }
  return out == DType::kBF16   ? prod::instances_fp16_bf16()
         : out == DType::kFP16 ? prod::instances_fp16_fp16()
                               : prod::instances_fp16_fp32();
}

// The tensor map of one operand: MN-major operands in 64-element x BK boxes,
// K-major ones in BK x `lines` boxes; 3-D (the batch entry the third
// coordinate) when each entry has its own matrix, else 2-D.
Status encode_operand(const OperandView& v, std::int64_t batch_count, std::uint32_t lines,
                      std::uint32_t bk, CUtensorMap* map) {
  const std::uint32_t box_inner = v.major == Major::kMN ? kChunk : bk;
  const std::uint32_t box_outer = v.major == Major::kMN ? bk : lines;
  if (v.shared) {
    return encode_tensor_map(
        TensorMap2d{v.ptr, v.dtype, static_cast<std::uint64_t>(v.inner),
                    static_cast<std::uint64_t>(v.outer), static_cast<std::uint64_t>(v.ld),
                    box_inner, box_outer, CU_TENSOR_MAP_SWIZZLE_128B},
        map);
  }
  TensorMap3d view;
  view.base = v.ptr;
  view.dtype = v.dtype;
  view.inner = static_cast<std::uint64_t>(v.inner);
  view.outer = static_cast<std::uint64_t>(v.outer);
  view.batch = static_cast<std::uint64_t>(batch_count);
  view.ld = static_cast<std::uint64_t>(v.ld);
  view.batch_stride = static_cast<std::uint64_t>(v.stride);
  view.box_inner = box_inner;
  view.box_outer = box_outer;
  return encode_tensor_map_3d(view, map);
}

// Where a launch's scratch lives: the repacked operands (problem.h's
// scratch layout), then the partial sums of a K split or of a stream-K
// tail, 256-byte aligned.
struct ScratchLayout {
  std::size_t partials_offset = 0;
  std::size_t bytes = 0;
};

// `split_units`: the units the launch splits (problem.h's split_units);
// `stream_k_clusters`: the clusters of a stream-K tail's grid (0: none).
ScratchLayout scratch_layout(const Problem& problem, const Choice& choice,
                             std::int64_t split_units, std::int64_t stream_k_clusters) {
  constexpr std::size_t kAlign = 256;
  ScratchLayout l;
  const std::size_t repack = tcgemm::prod::scratch_bytes(problem);
  const std::size_t partials =
      stream_k_clusters > 0
          ? tcgemm::prod::stream_k_partials_bytes(choice.config, stream_k_clusters)
          : tcgemm::prod::partials_bytes(problem, choice, split_units);
  l.partials_offset = (repack + kAlign - 1) / kAlign * kAlign;
  l.bytes = partials > 0 ? l.partials_offset + partials : repack;
  return l;
}

}  // namespace

namespace prod {

bool stream_k_enabled() {
  static const bool enabled = std::getenv("TCGEMM_DISABLE_STREAM_K") == nullptr;
  return enabled;
}

Status resolve_choice(const GemmArgs& args, int config, Choice* choice) {
  return resolve(args, config, choice);
}

bool config_of_kernel(std::string_view kernel_name, int* config) {
  if (kernel_name == "prod") {
    *config = kAutoConfig;
    return true;
  }
  if (kernel_name == "prod-invariant") {
    *config = kInvariantConfig;
    return true;
  }
  for (int i = 0; i < tcgemm::prod::kConfigCount; ++i) {
    if (kConfigs[i].name == kernel_name) {
      *config = i;
      return true;
    }
  }
  return false;
}

namespace {

// One device's attributes, queried (the clock-rate queries take hundreds of
// microseconds on the H200's driver: they go through to the hardware).
Status query_device_model(int device, tcgemm::prod::DeviceModel* model) {
  int sms = 0;
  int smem = 0;
  int sm_khz = 0;
  int memory_khz = 0;
  int bus_bits = 0;
  cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess) {
    err = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  }
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device);
  if (err == cudaSuccess) {
    err = cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device);
  }
  if (err == cudaSuccess) {
    err = cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    return {StatusCode::kCudaError,
            std::string("prod: device attribute query failed: ") + cudaGetErrorString(err)};
  }
  model->sm_count = sms;
  model->smem_per_block = static_cast<std::size_t>(smem);
  // Where the query fails (no cluster support), 0: taken as sms / 2, and no
  // error left pending for the caller.
  if (!max_whole_sm_clusters(2, model->smem_per_block, &model->pair_clusters).ok()) {
    cudaGetLastError();
    model->pair_clusters = 0;
  }
  // Double data rate: two transfers of bus_bits per memory clock.
  model->memory_bytes_per_cycle = sm_khz > 0 ? 2.0 * memory_khz * (bus_bits / 8.0) / sm_khz : 0.0;
  return Status::success();
}

// Devices whose model is cached after its first query (a device's
// attributes do not change while the process runs); others are queried
// every time.
constexpr int kCachedDevices = 64;

}  // namespace

Status device_model(tcgemm::prod::DeviceModel* model) {
  int device = 0;
  if (const cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) {
    cudaGetLastError();
    return {StatusCode::kCudaError,
            std::string("prod: cudaGetDevice failed: ") + cudaGetErrorString(err)};
  }
  if (device < 0 || device >= kCachedDevices) return query_device_model(device, model);
  static std::once_flag once[kCachedDevices];
  static tcgemm::prod::DeviceModel models[kCachedDevices];
  static Status statuses[kCachedDevices];
  std::call_once(once[device],
                 [device] { statuses[device] = query_device_model(device, &models[device]); });
  *model = models[device];
  return statuses[device];
}

Status device_model(const GemmArgs& args, tcgemm::prod::DeviceModel* model) {
  const Status s = device_model(model);
  *model = tcgemm::prod::budgeted(*model, args.sm_count);
  return s;
}

Status size_limits(const Problem& problem, Choice choice) {
  const tcgemm::prod::ConfigEntry& entry = kConfigs[choice.config];
  const tcgemm::prod::TileConfig& tile = entry.tile;
  const GemmArgs& c = problem.args;
  const std::int64_t tiles_m = sched::ceil_div(c.m, tile.bm);
  const std::int64_t tiles_n = sched::ceil_div(c.n, tile.bn);
  if (sched::ceil_div(tiles_m, tile.cluster_m) * tiles_n > sched::HilbertOrder::kMaxItems) {
    return {StatusCode::kNotSupported,
            std::string(entry.name) + ": more tiles per batch entry than its order indexes"};
  }
  if (!tcgemm::prod::repack_fits(problem)) {
    return {StatusCode::kNotSupported,
            std::string(entry.name) +
                ": the aligned copies of A and B it would make need over 2^62 bytes"};
  }
  // A copied operand's batch entries under 2^40 bytes apart, TMA's stride
  // limit (an operand streamed from the caller's memory meets TMA's rules,
  // or it is copied; the registry bounds M, N and K).
  for (const OperandView* v : {&problem.a, &problem.b}) {
    const auto elem = static_cast<std::uint64_t>(size_of(v->dtype));
    if (v->path == OperandPath::kRepack && !v->shared &&
        !tma_stride_ok(static_cast<std::uint64_t>(tcgemm::prod::repacked_stride(*v)) * elem)) {
      const bool caller_a = (v == &problem.a) != problem.swapped;
      return {StatusCode::kNotSupported,
              std::string(entry.name) + ": the aligned copy of " + (caller_a ? "A" : "B") +
                  " would place its batch entries 2^40 bytes or more apart (TMA's stride limit)"};
    }
  }
  const std::int64_t splits = tcgemm::prod::effective_splits(c.k, choice.k_splits);
  if (c.batch_count * splits > INT32_MAX) {
    return {StatusCode::kNotSupported, std::string(entry.name) + ": batch_count x K splits (" +
                                           std::to_string(c.batch_count * splits) +
                                           ") past the 32-bit batch coordinate"};
  }
  return Status::success();
}

std::size_t workspace_choice(const GemmArgs& args, Choice choice, bool allow_stream_k) {
  const Problem problem = tcgemm::prod::oriented(args, choice);
  // A problem prepare refuses needs no workspace (and past 2^62 bytes of
  // aligned copies the sizes below would wrap).
  if (!size_limits(problem, choice).ok()) return 0;
  // Before a launch has its grid, a tail split's split units are bounded by
  // the clusters the device could hold at most.
  std::int64_t max_resident = tcgemm::prod::work_units(problem, choice.config);
  // A stream-K tail's grid is every resident cluster, at most this many.
  std::int64_t stream_k_clusters = 0;
  if (tcgemm::prod::DeviceModel model; device_model(args, &model).ok()) {
    const tcgemm::prod::TileConfig& t = kConfigs[choice.config].tile;
    const std::int64_t device_clusters =
        std::int64_t{model.sm_count} * t.ctas_per_sm / t.cluster_m;
    if (choice.split_tail) max_resident = device_clusters;
    if (allow_stream_k && stream_k_enabled() &&
        tcgemm::prod::uses_stream_k(problem, choice, model)) {
      stream_k_clusters = device_clusters;
    }
  }
  const std::size_t scratch =
      scratch_layout(problem, choice,
                     tcgemm::prod::split_units_bound(problem, choice, max_resident),
                     stream_k_clusters)
          .bytes;
  return scratch == 0 ? 0 : tcgemm::prod::kReservedWorkspaceBytes + scratch;
}

}  // namespace prod

std::size_t workspace_prod(const GemmArgs& args, int config) {
  Choice choice;
  if (!prod::resolve_choice(args, config, &choice).ok()) return 0;
  return prod::workspace_choice(args, choice, config != kInvariantConfig);
}

std::string describe_prod(const GemmArgs& args, int config) {
  Choice choice;
  if (!resolve(args, config, &choice).ok()) {
    return "config unknown (no device to select by)";
  }
  tcgemm::prod::DeviceModel model;
  if (!prod::device_model(args, &model).ok()) return "config unknown (no device to select by)";
  tcgemm::prod::LaunchConfig l =
      tcgemm::prod::launch_config(tcgemm::prod::oriented(args, choice), choice, model);
  l.stream_k = l.stream_k && prod::stream_k_enabled() && config != kInvariantConfig;
  return tcgemm::prod::to_string(l);
}

Status limits_prod(const GemmArgs& args, int config) {
  Choice choice;
  if (Status s = prod::resolve_choice(args, config, &choice); !s.ok()) return s;  // as the launch
  return prod::size_limits(tcgemm::prod::oriented(args, choice), choice);
}

Status launch_prod(const GemmArgs& args, int config) {
  Choice choice;
  if (Status s = prod::resolve_choice(args, config, &choice); !s.ok()) {
    return s;
  }
  // The batch-invariant mode keeps every tile whole: a stream-K round sums
  // its tiles in another order, and whether there is one depends on M.
  return prod::launch_choice(args, choice, config != kInvariantConfig);
}

Status prod::prepare(const GemmArgs& args, Choice choice, PreparedLaunch* out,
                     bool allow_stream_k) {
  Problem problem = tcgemm::prod::oriented(args, choice);
  const tcgemm::prod::ConfigEntry& entry = kConfigs[choice.config];
  const tcgemm::prod::TileConfig& tile = entry.tile;
  const GemmArgs& c = problem.args;
  PreparedLaunch& prepared = *out;
  prepared = PreparedLaunch{};
  if (!tcgemm::prod::takes_b(tile, problem.b.major)) {
    return {StatusCode::kNotSupported,
            std::string(entry.name) + ": " + std::to_string(tile.bn) +
                "-column tiles take the kernel's B only K-major, and this problem's reaches it "
                "MN-major in the orientation chosen (both operands K-contiguous, A row-major and "
                "B column-major, run in either)"};
  }
  prepared.swapped = problem.swapped;
  const int splits = tcgemm::prod::effective_splits(c.k, choice.k_splits);
  // Reduced in place, a split's last piece of each tile adds the others'
  // partial sums and stores C through the instance's own epilogue (alpha,
  // beta, any layout, TMA store where C allows); reduced by a second kernel,
  // every piece writes fp32 partial sums (the register-epilogue instance)
  // and the reduction applies alpha and beta and writes C.
  prepared.split = splits > 1;
  prepared.split_in_place = tcgemm::prod::reduces_in_place(problem, choice);
  const bool split_tail = prepared.split && choice.split_tail;
  // An unsplit launch may spread its last round stream-K (the instance's
  // prepare decides with the clusters it finds resident).
  tcgemm::prod::DeviceModel model;
  if (Status s = prod::device_model(args, &model); !s.ok()) return s;
  if (split_tail && !prepared.split_in_place) {
    return {StatusCode::kInvalidValue,
            std::string(entry.name) +
                ": split_tail needs the in-place reduction (one CTA per SM, at most " +
                std::to_string(tcgemm::prod::kMaxInPlacePartialBytes) +
                " bytes of partial sums per tile past its last piece's, no "
                "separate_reduction)"};
  }
  prepared.tma_c =
      (!prepared.split || prepared.split_in_place) && problem.epilogue == EpiloguePath::kTmaStore;
  const bool c_batched = c.batch_count > 1;

  prod::Launch& launch = prepared.launch;
  launch.name = entry.name;
  launch.sm_limit = args.sm_count;
  prod::Params& p = launch.params;
  p.ldc = c.c.ld;
  p.stride_c = c_batched ? c.c.stride : 0;
  p.m = c.m;
  p.n = c.n;
  p.tiles_m = sched::ceil_div(c.m, tile.bm);
  p.tiles_n = sched::ceil_div(c.n, tile.bn);
  p.batch_count = c.batch_count;
  p.k_tiles = static_cast<int>(sched::ceil_div(c.k, tile.bk));
  p.k_splits = splits;
  p.k_tiles_per_split = static_cast<int>(tcgemm::prod::k_tiles_per_split(c.k, splits));
  // Every unit split; a tail split's whole units are set by the instance's
  // prepare, which knows the resident clusters.
  p.whole_units = 0;
  launch.split_tail = split_tail;
  launch.stream_k = allow_stream_k && prod::stream_k_enabled() &&
                    tcgemm::prod::uses_stream_k(problem, choice, model);
  p.a_batched = problem.a.shared ? 0 : 1;
  p.b_batched = problem.b.shared ? 0 : 1;
  // A split reduced by a second kernel stores dense slices, one per batch
  // entry and split (a 3-D C); one reduced in place stores C itself.
  p.c_batched = c_batched || (prepared.split && !prepared.split_in_place) ? 1 : 0;
  if (prepared.split && !prepared.split_in_place) {
    // C is the partial slices: e = batch * splits + split, dense M x N,
    // column-major, or row-major as the output of a flipped choice (so that
    // the reduction reads and writes along C's contiguous dimension).
    p.ldc = problem.c_row_major ? c.n : c.m;
    p.stride_c = c.m * c.n;
  }
  if (Status s = size_limits(problem, choice); !s.ok()) return s;

  // How the instance stores C (or a second kernel's dense fp32 slices, laid
  // out as C is).
  const bool to_slices = prepared.split && !prepared.split_in_place;
  const CStore store = problem.c_row_major && prepared.tma_c ? CStore::kTmaRowMajor
                       : problem.c_row_major                 ? CStore::kRowMajor
                       : prepared.tma_c                      ? CStore::kTma
                                                             : CStore::kColMajor;
  // The first step binds the device context the tensor-map encoder needs.
  prepared.instance =
      &instances(c.a.dtype, to_slices ? DType::kFP32 : c.c.dtype)[static_cast<std::size_t>(
          prod::instance_index(choice.config, problem.a.major, problem.b.major, store))];
  if (prepared.instance->prepare == nullptr) {  // an empty slot: prepare()'s checks missed it
    return {StatusCode::kNotSupported, std::string(entry.name) + ": no instance for this problem"};
  }
  if (Status s = prepared.instance->prepare(launch); !s.ok()) return s;

  const std::int64_t units = tcgemm::prod::work_units(problem, choice.config);
  if (split_tail && p.whole_units == units) {
    // Whole waves only: nothing left to split.
    p.k_splits = 1;
    p.k_tiles_per_split = p.k_tiles;
    p.whole_units = 0;
    launch.split_tail = false;
    prepared.split = false;
    prepared.split_in_place = false;
    // The same instance (a split reduced in place stores C as an unsplit
    // launch does), its grid sized again for the unsplit work.
    if (Status s = prepared.instance->prepare(launch); !s.ok()) return s;
  }
  const std::int64_t split_units = prepared.split ? units - p.whole_units : 0;
  if (prepared.split_in_place &&
      (tcgemm::prod::split_flag_count(choice.config, split_units, splits) >
           static_cast<std::int64_t>(tcgemm::prod::kSplitFlagSlices) ||
       split_units * splits > INT32_MAX)) {
    return {StatusCode::kNotSupported,
            std::string(entry.name) + ": more split tiles than the workspace has flags for"};
  }
  prepared.stream_k = launch.params.sk_iters > 0;
  const std::int64_t stream_k_clusters =
      prepared.stream_k ? std::int64_t{launch.ctas} / tile.cluster_m : 0;
  if (stream_k_clusters * tile.cluster_m * tile.consumers >
      static_cast<std::int64_t>(tcgemm::prod::kSplitFlagSlices)) {
    return {StatusCode::kNotSupported,
            std::string(entry.name) + ": more CTAs than the workspace has stream-K flags for"};
  }
  const ScratchLayout layout = scratch_layout(problem, choice, split_units, stream_k_clusters);
  prepared.scratch_bytes = layout.bytes;
  prepared.partials_offset = layout.partials_offset;
  // A repacked operand's map describes its copy in scratch: encoded here at
  // a stand-in aligned address, the copy's own set at enqueue.
  const std::size_t offsets[2] = {0, tcgemm::prod::scratch_offset_b(problem)};
  const void* const kStandIn = reinterpret_cast<const void*>(std::uintptr_t{kTmaAlignmentBytes});
  for (int i = 0; i < 2; ++i) {
    OperandView* v = i == 0 ? &problem.a : &problem.b;
    prepared.tma_operand[i] = v->path == OperandPath::kTma;
    if (prepared.tma_operand[i]) continue;
    prod::RepackJob& job = prepared.jobs[i];
    job.inner = v->inner;
    job.outer = v->outer;
    job.ld = v->ld;
    job.stride = v->stride;
    job.entries = v->shared ? 1 : c.batch_count;
    job.ld_dst = tcgemm::prod::repacked_ld(*v);
    job.stride_dst = tcgemm::prod::repacked_stride(*v);
    prepared.repack_offset[i] = offsets[i];
    v->ptr = kStandIn;
    v->ld = job.ld_dst;
    v->stride = job.stride_dst;
  }
  if (Status s = encode_operand(problem.a, c.batch_count, static_cast<std::uint32_t>(tile.bm),
                                static_cast<std::uint32_t>(tile.bk), &launch.map_a);
      !s.ok()) {
    return s;
  }
  if (Status s = encode_operand(problem.b, c.batch_count,
                                static_cast<std::uint32_t>(tile.bn / tile.cluster_m),
                                static_cast<std::uint32_t>(tile.bk), &launch.map_b);
      !s.ok()) {
    return s;
  }
  if (prepared.tma_c) {
    // C column-major M x N, one box 64 rows x c_cols columns; or row-major
    // (a flipped choice's output), one box 64 rows x row_major_c_box_cols
    // columns, c_cols / that many boxes a store (the kernel's
    // RowMajorCBuffer).
    const bool row = problem.c_row_major;
    const auto inner = static_cast<std::uint64_t>(row ? c.n : c.m);
    const auto outer = static_cast<std::uint64_t>(row ? c.m : c.n);
    const auto ldc = static_cast<std::uint64_t>(c.c.ld);
    const auto box_inner =
        static_cast<std::uint32_t>(row ? tcgemm::prod::row_major_c_box_cols(tile) : kCRows);
    const auto box_outer = static_cast<std::uint32_t>(row ? kCRows : tile.c_cols);
    const CUtensorMapSwizzle swizzle = !row || tcgemm::prod::row_major_c_swizzled(tile)
                                           ? CU_TENSOR_MAP_SWIZZLE_128B
                                           : CU_TENSOR_MAP_SWIZZLE_NONE;
    const Status s =
        c_batched ? encode_tensor_map_3d(TensorMap3d{c.c.ptr, c.c.dtype, inner, outer,
                                                     static_cast<std::uint64_t>(c.batch_count), ldc,
                                                     static_cast<std::uint64_t>(c.c.stride),
                                                     box_inner, box_outer, swizzle},
                                         &launch.map_c)
                  : encode_tensor_map(TensorMap2d{c.c.ptr, c.c.dtype, inner, outer, ldc, box_inner,
                                                  box_outer, swizzle},
                                      &launch.map_c);
    if (!s.ok()) return s;
  }
  prod::SplitKReduction& reduction = prepared.reduction;
  reduction.splits = splits;
  reduction.c_dtype = c.c.dtype;
  // A row-major output (and its slices) is the column-major N x M
  // transpose: the reduction runs on that.
  reduction.m = problem.c_row_major ? c.n : c.m;
  reduction.n = problem.c_row_major ? c.m : c.n;
  reduction.ldc = c.c.ld;
  reduction.stride_c = c_batched ? c.c.stride : 0;
  reduction.batch_count = c.batch_count;
  return Status::success();
}

Status prod::enqueue(const PreparedLaunch& prepared, const RunOperands& run, void* workspace,
                     cudaStream_t stream) {
  PreparedLaunch l = prepared;  // the maps and jobs get this run's addresses
  auto* const base = static_cast<std::uint8_t*>(workspace);
  std::uint8_t* const scratch =
      base == nullptr ? nullptr : base + tcgemm::prod::kReservedWorkspaceBytes;
  const void* operand[2] = {prepared.swapped ? run.b : run.a, prepared.swapped ? run.a : run.b};
  CUtensorMap* maps[2] = {&l.launch.map_a, &l.launch.map_b};
  for (int i = 0; i < 2; ++i) {
    const void* address = operand[i];
    if (!prepared.tma_operand[i]) {
      l.jobs[i].src = operand[i];
      l.jobs[i].dst = scratch + prepared.repack_offset[i];
      address = l.jobs[i].dst;
    }
    if (Status s = replace_tensor_map_address(maps[i], address); !s.ok()) return s;
  }
  if (prepared.tma_c) {
    if (Status s = replace_tensor_map_address(&l.launch.map_c, run.c); !s.ok()) return s;
  }
  prod::Params& p = l.launch.params;
  l.launch.stream = stream;
  const bool second_pass = prepared.split && !prepared.split_in_place;
  p.c = second_pass ? scratch + prepared.partials_offset : run.c;
  p.alpha = second_pass ? 1.0f : run.alpha;
  p.beta = second_pass ? 0.0f : run.beta;
  if (prepared.split_in_place || prepared.stream_k) {
    p.partials = reinterpret_cast<float*>(scratch + prepared.partials_offset);
    p.split_flags = reinterpret_cast<unsigned*>(base + tcgemm::prod::kSplitFlagOffset);
  }
  // Both repacked operands in one launch (one ramp-up and one tail); an
  // operand TMA streams from the caller's memory keeps prepare()'s empty job,
  // which copies nothing.
  if (Status s = prod::launch_repack(l.jobs, stream); !s.ok()) return s;
  if (Status s = prepared.instance->launch(l.launch); !s.ok() || !second_pass) return s;
  l.reduction.partials = static_cast<const float*>(p.c);
  l.reduction.c = run.c;
  l.reduction.alpha = run.alpha;
  l.reduction.beta = run.beta;
  return prod::launch_split_k_reduction(l.reduction, stream);
}

Status prod::launch_choice(const GemmArgs& args, Choice choice, bool allow_stream_k) {
  PreparedLaunch prepared;
  // Everything that can fail comes before anything is enqueued.
  if (Status s = prod::prepare(args, choice, &prepared, allow_stream_k); !s.ok()) return s;
  // The caller's workspace when it is large enough, else stream-ordered
  // memory freed after the launch, its split-K flags zeroed first.
  void* workspace = nullptr;
  bool owned = false;
  if (prepared.scratch_bytes > 0) {
    const std::size_t bytes = tcgemm::prod::kReservedWorkspaceBytes + prepared.scratch_bytes;
    if (args.workspace != nullptr && args.workspace_bytes >= bytes) {
      workspace = args.workspace;
    } else {
      cudaError_t err = cudaMallocAsync(&workspace, bytes, args.stream);
      if (err == cudaSuccess && (prepared.split_in_place || prepared.stream_k)) {
        err =
            cudaMemsetAsync(static_cast<std::uint8_t*>(workspace) + tcgemm::prod::kSplitFlagOffset,
                            0, tcgemm::prod::kSplitFlagBytes, args.stream);
      }
      if (err != cudaSuccess) {
        cudaGetLastError();
        if (workspace != nullptr) cudaFreeAsync(workspace, args.stream);
        return {StatusCode::kCudaError, std::string(prepared.launch.name) + ": allocating " +
                                            std::to_string(bytes) +
                                            " bytes of scratch failed (pass a workspace of "
                                            "tcgemm::workspace_size bytes to avoid it): " +
                                            cudaGetErrorString(err)};
      }
      owned = true;
    }
  }
  const Status status = prod::enqueue(
      prepared, RunOperands{args.a.ptr, args.b.ptr, args.c.ptr, args.alpha, args.beta}, workspace,
      args.stream);
  if (owned) cudaFreeAsync(workspace, args.stream);
  return status;
}

}  // namespace tcgemm::kernels
