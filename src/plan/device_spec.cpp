#include "plan/device_spec.h"

#include <algorithm>
#include <array>

namespace tcgemm::plan {
namespace {

// Moore Threads MTT S4000, architecture MP_22. Every published number comes
// from the article (shared/seeds/s4000-wmma-hgemm.zh.txt, section 2): "each MP
// has 131072 32-bit registers, 73728 bytes of local memory, at most 6144
// threads = 48 warps; a block at most 1024 threads; a thread at most 256
// registers -- but 256 only with 512 threads per block, 128 with 1024", and
// "all Moore Threads GPUs have a warp size of 128". The 256/128 note is the
// per-block register file (131072) divided by the block's threads, so a block
// may take the whole register file: max_regs_per_block = 131072.
constexpr DeviceSpec kS4000{
    .name = "s4000",
    .description = "Moore Threads MTT S4000 (MP_22)",
    .warp_size = 128,
    .regs_per_sm = 131072,
    .max_regs_per_block = 131072,
    .max_regs_per_thread = 256,
    .reg_alloc_unit = 128,  // assumed: one register per lane, no rounding
    .reg_sub_partitions = 1,
    .smem_per_sm = 73728,
    .smem_per_block_max = 73728,  // assumed: a block may take the whole MP
    .smem_reserved_per_block = 0,
    .smem_alloc_unit = 1,
    .max_threads_per_sm = 6144,
    .max_threads_per_block = 1024,
    .max_blocks_per_sm = 0,  // not published; 6144 threads allow <= 48 blocks
    .sources =
        "article section 2 (registers, local memory, threads, warp 128, "
        "256 registers/thread at 512 threads and 128 at 1024)",
    .unverified =
        "register allocation unit (assumed 1 register/lane), shared memory "
        "per block (assumed the whole 73728 B), reservation and allocation "
        "unit (assumed none), resident blocks per MP (not published)",
};

// sm_90 (GH100). H100 and H200 share the SM; they differ in memory only.
// CUDA C Programming Guide, "Technical Specifications per Compute Capability",
// column 9.0: 32 resident blocks and 2048 threads per SM, 1024 threads per
// block, 64K 32-bit registers per SM and per block, 255 registers per thread,
// 228 KB shared memory per SM, 227 KB per block (opt-in; 1 KB per block is
// reserved for system use). cuda_occupancy.h (CUDA 13.0), for compute
// capability 9: register allocation granularity 256 registers per warp
// (cudaOccRegAllocationGranularity), 4 sub-partitions
// (cudaOccSubPartitionsPerMultiprocessor; the hardware rounds a block's warps
// up to a multiple of 4 when it checks the per-block register limit, and
// places warps' registers per sub-partition), shared memory allocated in
// 128-byte units (cudaOccSMemAllocationGranularity) after adding
// reservedSharedMemPerBlock (1024 on sm_90).
constexpr DeviceSpec kSm90Base{
    .name = "",
    .description = "",
    .warp_size = 32,
    .regs_per_sm = 65536,
    .max_regs_per_block = 65536,
    .max_regs_per_thread = 255,
    .reg_alloc_unit = 256,
    .reg_sub_partitions = 4,
    .smem_per_sm = 228 * 1024,
    .smem_per_block_max = 227 * 1024,
    .smem_reserved_per_block = 1024,
    .smem_alloc_unit = 128,
    .max_threads_per_sm = 2048,
    .max_threads_per_block = 1024,
    .max_blocks_per_sm = 32,
    .sources =
        "CUDA C Programming Guide, compute capability 9.0 column; "
        "cuda_occupancy.h (CUDA 13.0): register granularity 256/warp, "
        "4 sub-partitions, 128-byte shared memory unit, 1 KB reserved per block",
    .unverified = "",
};

constexpr DeviceSpec with_name(DeviceSpec spec, std::string_view name,
                               std::string_view description) {
  spec.name = name;
  spec.description = description;
  return spec;
}

constexpr std::array<DeviceSpec, 3> kDevices{
    kS4000,
    with_name(kSm90Base, "h100", "NVIDIA H100 (sm_90)"),
    with_name(kSm90Base, "h200", "NVIDIA H200 (sm_90)"),
};

int round_down(int x, int multiple) { return x / multiple * multiple; }
int round_up(int x, int multiple) { return (x + multiple - 1) / multiple * multiple; }

}  // namespace

const DeviceSpec& s4000() { return kDevices[0]; }
const DeviceSpec& h100() { return kDevices[1]; }
const DeviceSpec& h200() { return kDevices[2]; }

std::span<const DeviceSpec> builtin_devices() { return kDevices; }

const DeviceSpec* find_device(std::string_view name) {
  const auto it = std::find_if(kDevices.begin(), kDevices.end(),
                               [&](const DeviceSpec& d) { return d.name == name; });
  return it == kDevices.end() ? nullptr : &*it;
}

int max_regs_per_thread_at(const DeviceSpec& spec, int threads_per_block) {
  if (threads_per_block <= 0) return spec.max_regs_per_thread;
  const int warps = (threads_per_block + spec.warp_size - 1) / spec.warp_size;
  const int warps_checked = round_up(warps, spec.reg_sub_partitions);
  const int regs_per_warp =
      round_down(spec.max_regs_per_block / warps_checked, spec.reg_alloc_unit);
  return std::min(spec.max_regs_per_thread, regs_per_warp / spec.warp_size);
}

}  // namespace tcgemm::plan
