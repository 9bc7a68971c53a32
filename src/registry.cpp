// The kernel registry and the one function that checks a kernel's constraints.
#include <tcgemm/registry.h>

#include "kernels/kernels.h"

#include <array>
#include <string>

namespace tcgemm {
namespace {

// TMA: global strides are multiples of 16 bytes (8 half-precision elements),
// base addresses 16-byte aligned, coordinates are signed 32-bit.
constexpr std::int64_t kTmaStrideElements16 = 8;
constexpr std::int64_t kTmaAlignmentBytes = 16;
constexpr std::int64_t kTmaMaxCoordinate = (std::int64_t{1} << 31) - 1;

constexpr std::uint32_t kHalfTypes = bit(DType::kBF16) | bit(DType::kFP16);
constexpr std::uint32_t kAllOutputTypes = kHalfTypes | bit(DType::kFP32);

const std::array kKernels = {
    KernelInfo{
        "k05_warp_specialized",
        "Hopper step 5: TMA 128B-swizzle ring, mbarriers, 1 producer + 2 consumer warpgroups, "
        "wgmma m64n256k16, setmaxnreg; 128x256x64 tile, 4 stages",
        KernelConstraints{
            .input_dtypes = kHalfTypes,
            .output_dtypes = kAllOutputTypes,
            .a_layouts = bit(Layout::kRowMajor),
            .b_layouts = bit(Layout::kColMajor),
            .c_layouts = bit(Layout::kColMajor),
            .lda_multiple = kTmaStrideElements16,
            .ldb_multiple = kTmaStrideElements16,
            .ab_alignment = kTmaAlignmentBytes,
            .max_dim = kTmaMaxCoordinate,
            .max_batch = 1,
            .compute_capability = 90,
        },
        &kernels::launch_k05_warp_specialized,
        /*dispatch_rank=*/5,
    },
};

std::string set_names(std::uint32_t set, bool is_layout) {
  std::string out;
  for (int i = 0; i < 3; ++i) {
    if ((set & (1u << i)) == 0) continue;
    if (!out.empty()) out += "|";
    out += is_layout ? to_string(static_cast<Layout>(i)) : to_string(static_cast<DType>(i));
  }
  return out.empty() ? "none" : out;
}

std::string multiple_reason(const char* what, std::int64_t value, std::int64_t multiple) {
  return std::string(what) + "=" + std::to_string(value) + " is not a multiple of " +
         std::to_string(multiple);
}

}  // namespace

std::span<const KernelInfo> registry() { return kKernels; }

const KernelInfo* find_kernel(std::string_view name) {
  for (const KernelInfo& kernel : kKernels) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

std::string check_constraints(const KernelConstraints& c, const GemmArgs& args,
                              const DeviceCaps& device) {
  if (c.compute_capability != 0 && device.compute_capability != c.compute_capability) {
    return "needs compute capability " + std::to_string(c.compute_capability) +
           " (sm_" + std::to_string(c.compute_capability) + "a), device has " +
           std::to_string(device.compute_capability);
  }
  if ((c.input_dtypes & bit(args.a.dtype)) == 0) {
    return "input dtype " + std::string(to_string(args.a.dtype)) + " (supports " +
           set_names(c.input_dtypes, false) + ")";
  }
  if ((c.output_dtypes & bit(args.c.dtype)) == 0) {
    return "output dtype " + std::string(to_string(args.c.dtype)) + " (supports " +
           set_names(c.output_dtypes, false) + ")";
  }
  const std::pair<const char*, std::pair<Layout, std::uint32_t>> layouts[] = {
      {"A", {args.a.layout, c.a_layouts}},
      {"B", {args.b.layout, c.b_layouts}},
      {"C", {args.c.layout, c.c_layouts}},
  };
  for (const auto& [name, layout] : layouts) {
    if ((layout.second & bit(layout.first)) == 0) {
      return std::string(name) + " layout " + std::string(to_string(layout.first)) +
             "-major (supports " + set_names(layout.second, true) + "-major)";
    }
  }
  if (args.m % c.m_multiple != 0) return multiple_reason("M", args.m, c.m_multiple);
  if (args.n % c.n_multiple != 0) return multiple_reason("N", args.n, c.n_multiple);
  if (args.k % c.k_multiple != 0) return multiple_reason("K", args.k, c.k_multiple);
  if (args.a.ld % c.lda_multiple != 0) return multiple_reason("lda", args.a.ld, c.lda_multiple);
  if (args.b.ld % c.ldb_multiple != 0) return multiple_reason("ldb", args.b.ld, c.ldb_multiple);
  if (args.c.ld % c.ldc_multiple != 0) return multiple_reason("ldc", args.c.ld, c.ldc_multiple);
  const std::pair<const char*, std::pair<const void*, std::int64_t>> pointers[] = {
      {"A", {args.a.ptr, c.ab_alignment}},
      {"B", {args.b.ptr, c.ab_alignment}},
      {"C", {args.c.ptr, c.c_alignment}},
  };
  for (const auto& [name, pointer] : pointers) {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer.first);
    if (address % static_cast<std::uintptr_t>(pointer.second) != 0) {
      return std::string(name) + " pointer is not " + std::to_string(pointer.second) +
             "-byte aligned";
    }
  }
  if (args.m > c.max_dim || args.n > c.max_dim || args.k > c.max_dim) {
    return "M, N and K must be at most " + std::to_string(c.max_dim);
  }
  if (args.batch_count > c.max_batch) {
    return "batch_count=" + std::to_string(args.batch_count) + " (supports at most " +
           std::to_string(c.max_batch) + ")";
  }
  return {};
}

std::string describe(const KernelConstraints& c) {
  std::string out = "in " + set_names(c.input_dtypes, false) + ", out " +
                    set_names(c.output_dtypes, false) + ", A " + set_names(c.a_layouts, true) +
                    " B " + set_names(c.b_layouts, true) + " C " + set_names(c.c_layouts, true);
  if (c.m_multiple > 1 || c.n_multiple > 1 || c.k_multiple > 1) {
    out += ", M%" + std::to_string(c.m_multiple) + " N%" + std::to_string(c.n_multiple) + " K%" +
           std::to_string(c.k_multiple);
  }
  if (c.lda_multiple > 1 || c.ldb_multiple > 1 || c.ldc_multiple > 1) {
    out += ", lda%" + std::to_string(c.lda_multiple) + " ldb%" + std::to_string(c.ldb_multiple) +
           " ldc%" + std::to_string(c.ldc_multiple);
  }
  if (c.ab_alignment > 1 || c.c_alignment > 1) {
    out += ", align A/B " + std::to_string(c.ab_alignment) + "B C " +
           std::to_string(c.c_alignment) + "B";
  }
  out += ", batch <= " + std::to_string(c.max_batch);
  if (c.compute_capability != 0) out += ", sm_" + std::to_string(c.compute_capability) + "a";
  return out;
}

}  // namespace tcgemm
