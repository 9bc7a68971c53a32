// The kernel registry: every tcgemm kernel, described as data.
//
// The API dispatcher, tcgemm-bench, the tuner and the tests all read this one
// list; nothing switches on kernel numbers. A kernel's constraints are plain
// data checked by one function (check_constraints), so the same rule refuses
// a problem in the API, skips it in the bench and is unit-tested on the CPU.
#pragma once

#include <tcgemm/tcgemm.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tcgemm {

// Bit sets over the small enums, e.g. bit(DType::kBF16) | bit(DType::kFP16).
constexpr std::uint32_t bit(DType d) { return 1u << static_cast<int>(d); }
constexpr std::uint32_t bit(Layout l) { return 1u << static_cast<int>(l); }

// What a kernel needs of a problem. Sizes and leading dimensions are in
// elements, alignments in bytes. A multiple of 1 means "any".
struct KernelConstraints {
  std::uint32_t input_dtypes = 0;   // bit(DType) set for A and B
  std::uint32_t output_dtypes = 0;  // bit(DType) set for C
  std::uint32_t a_layouts = 0;      // bit(Layout) set
  std::uint32_t b_layouts = 0;
  std::uint32_t c_layouts = 0;
  std::int64_t m_multiple = 1;
  std::int64_t n_multiple = 1;
  std::int64_t k_multiple = 1;
  std::int64_t lda_multiple = 1;
  std::int64_t ldb_multiple = 1;
  std::int64_t ldc_multiple = 1;
  std::int64_t ab_alignment = 1;     // bytes, for the A and B base pointers
  std::int64_t c_alignment = 1;      // bytes, for the C base pointer
  std::int64_t max_dim = INT64_MAX;  // largest M, N, K
  std::int64_t max_ld = INT64_MAX;   // largest lda, ldb, ldc
  std::int64_t max_batch = 1;
  std::int64_t max_small_dim = INT64_MAX;  // largest min(M, N)
  std::int64_t ab_stride_multiple = 1;     // A's and B's batch strides (batch_count > 1)
  int compute_capability = 0;              // exact SM version required (90 = sm_90a); 0 = any
};

// The device facts a kernel's constraints are checked against.
struct DeviceCaps {
  int compute_capability = 0;  // major * 10 + minor; 0 = no device
};

// Empty when `args` satisfies `constraints` on `device`, otherwise the first
// reason it does not, naming what is missing (e.g. "lda=4097 is not a multiple
// of 8"). Assumes validate(args) passed.
std::string check_constraints(const KernelConstraints& constraints, const GemmArgs& args,
                              const DeviceCaps& device);

// Enqueues the kernel on args.stream. Called only after check_constraints
// passed and with M, N, K > 0.
using KernelLauncher = Status (*)(const GemmArgs& args);

struct KernelInfo {
  std::string_view name;         // stable, used by --kernels filters and GemmOptions
  std::string_view description;  // one line
  KernelConstraints constraints;
  KernelLauncher launch = nullptr;
  // The dispatcher tries kernels from the highest rank down; 0 means never
  // chosen automatically (teaching steps, unsafe variants), only by name.
  int dispatch_rank = 0;
  // Bytes of GemmArgs::workspace the kernel needs for this problem on the
  // current device (it may query the device); nullptr, or a result of 0,
  // means it needs none. Called only after check_constraints passed. A kernel
  // that uses the workspace leaves the bytes it needs zero (its flags) zero
  // again when it finishes.
  std::size_t (*workspace_bytes)(const GemmArgs& args) = nullptr;
  // True when the workspace is a help, not a need: the kernel runs without
  // one (the production family then allocates its repack scratch
  // stream-ordered for the call), so the dispatcher never skips it for want
  // of a workspace; workspace_size still reports the bytes it would use.
  bool workspace_optional = false;
  // The launch configuration the kernel would run `args` with, one line
  // (tcgemm::describe); nullptr when the description says it all.
  std::string (*describe_config)(const GemmArgs& args) = nullptr;
  // True when the dispatcher should pass the kernel over for `args` though
  // it can run it: the tuned table (docs/tuning.md) measured another kernel
  // faster on this exact problem and the current device. nullptr: never. A
  // kernel named in GemmOptions still runs. Called only after
  // check_constraints passed.
  bool (*passed_over)(const GemmArgs& args) = nullptr;
  // kNotSupported, naming the limit, where the kernel's launch would refuse
  // this problem though its constraints pass (a size only the launch's
  // choice of tile and K split shows), so that tcgemm::describe reports
  // what gemm would return; nullptr or success: no such limit. Called only
  // after check_constraints passed.
  Status (*limits)(const GemmArgs& args) = nullptr;
};

// All kernels, in ladder order (the order tables and listings use).
std::span<const KernelInfo> registry();

// The kernel with this exact name, or nullptr.
const KernelInfo* find_kernel(std::string_view name);

// Empty when `kernel` needs no workspace for `args` (or only uses one when
// given: workspace_optional) or args gives it enough
// (a non-null args.workspace of at least that many args.workspace_bytes);
// otherwise the reason, e.g. "needs 17305600 bytes of workspace
// (tcgemm::workspace_size); args.workspace_bytes is 0". Assumes
// check_constraints(kernel.constraints, ...) passed.
std::string check_workspace(const KernelInfo& kernel, const GemmArgs& args);

// One line describing the constraints, for tables and error messages.
std::string describe(const KernelConstraints& constraints);

}  // namespace tcgemm
