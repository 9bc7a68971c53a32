#include "plan/prod_plan.h"

#include <algorithm>

namespace tcgemm::plan {

ProdPlan plan_prod(const DeviceSpec& spec, const tcgemm::prod::TileConfig& tile, int out_bytes) {
  ProdPlan p;
  p.threads = tcgemm::prod::threads(tile);
  p.smem_block = tcgemm::prod::smem_bytes(tile, out_bytes);
  const auto per_block = static_cast<int>(p.smem_block) + spec.smem_reserved_per_block;
  p.ctas_by_smem = per_block > 0 ? spec.smem_per_sm / per_block : 0;
  p.ctas_by_threads = spec.max_threads_per_sm / std::max(p.threads, 1);
  // The register file split evenly over the resident threads, in the
  // allocation granule of 8 per thread, capped per thread. With two
  // or three consumers the kernel moves registers from the producer
  // warpgroup (setmaxnreg): 40 for it leaves the rest to the consumers.
  const int resident_threads = p.threads * tile.ctas_per_sm;
  const int even = std::min(spec.regs_per_sm / std::max(resident_threads, 1) / 8 * 8,
                            spec.max_regs_per_thread / 8 * 8);
  constexpr int kProducerRegs = 40;
  p.regs_available =
      tile.consumers >= 2
          ? std::min((even * p.threads - kProducerRegs * tcgemm::prod::kWarpgroupThreads) /
                         (tile.consumers * tcgemm::prod::kWarpgroupThreads) / 8 * 8,
                     spec.max_regs_per_thread / 8 * 8)
          : even;
  p.consumer_regs_needed =
      tile.bn / 2 + (tile.deferred_store ? tile.bn / 4 : 0) + kProdOverheadRegs;
  if (const std::string rule = tcgemm::prod::check(tile); !rule.empty()) {
    p.reason = rule;
  } else if (p.smem_block > static_cast<std::size_t>(spec.smem_per_block_max)) {
    p.reason = "shared memory: " + std::to_string(p.smem_block) +
               " bytes per CTA, the device allows " + std::to_string(spec.smem_per_block_max);
  } else if (p.ctas_by_smem < tile.ctas_per_sm) {
    p.reason = "shared memory: " + std::to_string(tile.ctas_per_sm) + " CTAs of " +
               std::to_string(per_block) + " bytes do not fit in " +
               std::to_string(spec.smem_per_sm);
  } else if (p.ctas_by_threads < tile.ctas_per_sm) {
    p.reason = "threads: " + std::to_string(tile.ctas_per_sm) + " CTAs of " +
               std::to_string(p.threads) + " exceed " + std::to_string(spec.max_threads_per_sm);
  } else if (p.consumer_regs_needed > p.regs_available) {
    p.reason = "registers: the consumers need about " + std::to_string(p.consumer_regs_needed) +
               " per thread, the launch leaves " + std::to_string(p.regs_available);
  }
  p.fits = p.reason.empty();
  return p;
}

}  // namespace tcgemm::plan
