// The planner's check of a production-family TileConfig (src/kernels/prod/
// config.h) on a device spec: shared memory, threads, registers and how many
// CTAs fit per SM, against what the config asks for. Pure host C++.
#pragma once

#include <string>

#include "kernels/prod/config.h"
#include "plan/device_spec.h"

namespace tcgemm::plan {

struct ProdPlan {
  int threads = 0;             // per CTA: one producer warpgroup + the consumers
  std::size_t smem_block = 0;  // dynamic shared memory the kernel asks for, bytes
  int ctas_by_smem = 0;        // CTAs per SM the shared memory allows
  int ctas_by_threads = 0;
  // Registers per thread the launch allows at ctas_per_sm CTAs per SM, and
  // what the consumers need: BN / 2 fp32 accumulators, BN / 4 packed pairs
  // with the deferred store, plus kOverheadRegs for addresses and loop state.
  int regs_available = 0;
  int consumer_regs_needed = 0;
  bool fits = false;
  std::string reason;  // the first limit it breaks, "" when it fits
};

inline constexpr int kProdOverheadRegs = 40;

// out_bytes: 2 for bf16/fp16 C (shared C buffers), 4 for fp32 C.
ProdPlan plan_prod(const DeviceSpec& spec, const tcgemm::prod::TileConfig& tile, int out_bytes);

}  // namespace tcgemm::plan
