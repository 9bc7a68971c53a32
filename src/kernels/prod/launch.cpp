// Host side of the production family: a problem from the API becomes one
// launch of one instance. Canonicalize (problem.cpp), pick the config, repack
// the operands TMA cannot address into scratch (the caller's workspace when
// it is large enough, else stream-ordered memory freed after the launch),
// encode the three tensor maps, then launch the instance.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kernels/kernels.h"
#include "kernels/prod/params.h"
#include "kernels/prod/problem.h"
#include "kernels/prod/repack.h"
#include "sched/hilbert.h"
#include "sched/tile_order.h"
#include "tensor_map.h"

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

// The config `config` names, or the dispatcher's choice when it is negative.
Status resolve_config(const Problem& problem, int* config) {
  if (*config >= 0) return Status::success();
  int sms = 0;
  if (Status s = hopper::multiprocessor_count(&sms); !s.ok()) return s;
  *config = tcgemm::prod::select_config(problem, sms);
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

}  // namespace

std::size_t workspace_prod(const GemmArgs& args) {
  const std::size_t scratch = tcgemm::prod::scratch_bytes(tcgemm::prod::canonicalize(args));
  return scratch == 0 ? 0 : tcgemm::prod::kReservedWorkspaceBytes + scratch;
}

std::string describe_prod(const GemmArgs& args, int config) {
  const Problem problem = tcgemm::prod::canonicalize(args);
  if (!resolve_config(problem, &config).ok()) return "config unknown (no device to select by)";
  return tcgemm::prod::to_string(tcgemm::prod::launch_config(problem, config));
}

Status launch_prod(const GemmArgs& args, int config) {
  Problem problem = tcgemm::prod::canonicalize(args);
  if (Status s = resolve_config(problem, &config); !s.ok()) return s;
  const tcgemm::prod::ConfigEntry& entry = kConfigs[config];
  const tcgemm::prod::TileConfig& tile = entry.tile;
  const GemmArgs& c = problem.args;
  const bool tma_c = problem.epilogue == EpiloguePath::kTmaStore;
  const bool c_batched = c.batch_count > 1;

  prod::Launch launch{};
  launch.stream = args.stream;
  launch.name = entry.name;
  prod::Params& p = launch.params;
  p.c = c.c.ptr;
  p.ldc = c.c.ld;
  p.stride_c = c_batched ? c.c.stride : 0;
  p.m = c.m;
  p.n = c.n;
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.tiles_m = sched::ceil_div(c.m, tile.bm);
  p.tiles_n = sched::ceil_div(c.n, tile.bn);
  p.batch_count = c.batch_count;
  p.k_tiles = static_cast<int>(sched::ceil_div(c.k, tile.bk));
  p.a_batched = problem.a.shared ? 0 : 1;
  p.b_batched = problem.b.shared ? 0 : 1;
  p.c_batched = c_batched ? 1 : 0;
  if (sched::ceil_div(p.tiles_m, tile.cluster_m) * p.tiles_n > sched::HilbertOrder::kMaxItems) {
    return {StatusCode::kNotSupported,
            std::string(entry.name) + ": more tiles per batch entry than its order indexes"};
  }

  // Everything that can fail comes before anything is enqueued; the first
  // step binds the device context the tensor-map encoder needs.
  const prod::Instance& instance = instances(c.a.dtype, c.c.dtype)[static_cast<std::size_t>(
      prod::instance_index(config, problem.a.major, problem.b.major, tma_c))];
  if (Status s = instance.prepare(launch); !s.ok()) return s;

  // Scratch for the repacked operands: the caller's workspace past the
  // region stream-K kernels keep their flags in, or stream-ordered memory
  // freed after the launch.
  const std::size_t scratch = tcgemm::prod::scratch_bytes(problem);
  std::uint8_t* scratch_base = nullptr;
  bool scratch_owned = false;
  if (scratch > 0) {
    if (args.workspace != nullptr &&
        args.workspace_bytes >= tcgemm::prod::kReservedWorkspaceBytes + scratch) {
      scratch_base =
          static_cast<std::uint8_t*>(args.workspace) + tcgemm::prod::kReservedWorkspaceBytes;
    } else {
      void* allocation = nullptr;
      const cudaError_t err = cudaMallocAsync(&allocation, scratch, args.stream);
      if (err != cudaSuccess) {
        cudaGetLastError();
        return {StatusCode::kCudaError, std::string(entry.name) + ": cudaMallocAsync of " +
                                            std::to_string(scratch) +
                                            " bytes of repack scratch failed (pass a workspace of "
                                            "tcgemm::workspace_size bytes to avoid it): " +
                                            cudaGetErrorString(err)};
      }
      scratch_base = static_cast<std::uint8_t*>(allocation);
      scratch_owned = true;
    }
  }
  const auto finish = [&](Status status) {
    if (scratch_owned) cudaFreeAsync(scratch_base, args.stream);
    return status;
  };

  // The repacks' destinations become the operands the maps describe.
  prod::RepackJob jobs[2];
  int job_count = 0;
  const std::size_t offsets[2] = {0, tcgemm::prod::scratch_offset_b(problem)};
  for (int i = 0; i < 2; ++i) {
    OperandView* v = i == 0 ? &problem.a : &problem.b;
    if (v->path != OperandPath::kRepack) continue;
    prod::RepackJob& job = jobs[job_count++];
    job.src = v->ptr;
    job.dst = scratch_base + offsets[i];
    job.inner = v->inner;
    job.outer = v->outer;
    job.ld = v->ld;
    job.stride = v->stride;
    job.entries = v->shared ? 1 : c.batch_count;
    job.ld_dst = tcgemm::prod::repacked_ld(*v);
    job.stride_dst = tcgemm::prod::repacked_stride(*v);
    v->ptr = job.dst;
    v->ld = job.ld_dst;
    v->stride = job.stride_dst;
  }
  if (Status s = encode_operand(problem.a, c.batch_count, static_cast<std::uint32_t>(tile.bm),
                                static_cast<std::uint32_t>(tile.bk), &launch.map_a);
      !s.ok()) {
    return finish(s);
  }
  if (Status s = encode_operand(problem.b, c.batch_count,
                                static_cast<std::uint32_t>(tile.bn / tile.cluster_m),
                                static_cast<std::uint32_t>(tile.bk), &launch.map_b);
      !s.ok()) {
    return finish(s);
  }
  if (tma_c) {
    // C column-major M x N; one box is 64 rows x c_cols columns.
    const auto m = static_cast<std::uint64_t>(c.m);
    const auto n = static_cast<std::uint64_t>(c.n);
    const auto ldc = static_cast<std::uint64_t>(c.c.ld);
    const auto box_cols = static_cast<std::uint32_t>(tile.c_cols);
    const Status s =
        c_batched ? encode_tensor_map_3d(TensorMap3d{c.c.ptr, c.c.dtype, m, n,
                                                     static_cast<std::uint64_t>(c.batch_count), ldc,
                                                     static_cast<std::uint64_t>(c.c.stride), kCRows,
                                                     box_cols, CU_TENSOR_MAP_SWIZZLE_128B},
                                         &launch.map_c)
                  : encode_tensor_map(TensorMap2d{c.c.ptr, c.c.dtype, m, n, ldc, kCRows, box_cols,
                                                  CU_TENSOR_MAP_SWIZZLE_128B},
                                      &launch.map_c);
    if (!s.ok()) return finish(s);
  }

  for (int i = 0; i < job_count; ++i) {
    if (Status s = prod::launch_repack(jobs[i], args.stream); !s.ok()) return finish(s);
  }
  return finish(instance.launch(launch));
}

}  // namespace tcgemm::kernels
