// Device specs for the feasibility planner: the per-SM (per-MP on Moore
// Threads) resource limits that decide whether a tile configuration can be
// resident, as static data with the source of every fact.
//
// These describe a device the planner reasons about, possibly one that is not
// present (the S4000); host code that launches kernels reads the limits from
// the device instead (cudaGetDeviceProperties).
#pragma once

#include <span>
#include <string_view>

namespace tcgemm::plan {

// A value of 0 in max_blocks_per_sm means "not published".
struct DeviceSpec {
  std::string_view name;         // the CLI key: "s4000", "h100", "h200"
  std::string_view description;  // e.g. "NVIDIA H100 (sm_90)"
  int warp_size = 32;            // lanes of one warp

  // Registers (32-bit).
  int regs_per_sm = 0;
  int max_regs_per_block = 0;  // the register file one block may take
  int max_regs_per_thread = 0;
  int reg_alloc_unit = 0;      // a warp's registers are rounded up to this
  int reg_sub_partitions = 1;  // register file split per scheduler (warps are
                               // placed in one sub-partition); 1 = not split

  // Shared memory (the article's "local memory"), bytes.
  int smem_per_sm = 0;
  int smem_per_block_max = 0;       // the most one block may declare (opt-in)
  int smem_reserved_per_block = 0;  // taken by the driver from every block
  int smem_alloc_unit = 1;          // a block's shared memory is rounded up to this

  // Threads and blocks.
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  int max_blocks_per_sm = 0;

  std::string_view sources;     // where the facts above come from
  std::string_view unverified;  // facts assumed, not published
};

// The S4000 (MP_22) as the article describes it; the sm_90 parts from the CUDA
// C Programming Guide and the occupancy rules of cuda_occupancy.h.
const DeviceSpec& s4000();
const DeviceSpec& h100();
const DeviceSpec& h200();

std::span<const DeviceSpec> builtin_devices();

// The built-in spec with that CLI key, or nullptr.
const DeviceSpec* find_device(std::string_view name);

// The most registers one thread may hold in a block of `threads_per_block`:
// the per-thread cap, and the block's share of the per-block register file,
// with a warp's registers rounded to the allocation unit and the warps
// rounded up to a multiple of the sub-partitions (as the hardware checks).
// On the S4000 this gives the article's 256 at 512 threads, 128 at 1024.
int max_regs_per_thread_at(const DeviceSpec& spec, int threads_per_block);

}  // namespace tcgemm::plan
