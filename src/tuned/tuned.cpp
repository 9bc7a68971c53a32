#include "tuned/tuned.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tcgemm::tuned {
namespace {

// The name of every device ordinal, each read on first use.
class DeviceNames {
 public:
  DeviceNames() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      count = 0;
    }
    count_ = count;
    slots_ = std::make_unique<Slot[]>(static_cast<std::size_t>(count));
  }

  // nullptr when `device` is out of range or cannot be queried.
  const std::string* name(int device) {
    if (device < 0 || device >= count_) return nullptr;
    Slot& slot = slots_[static_cast<std::size_t>(device)];
    std::call_once(slot.once, [&slot, device] {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        static_cast<void>(cudaGetLastError());
        return;
      }
      slot.name = prop.name;
      slot.known = true;
    });
    return slot.known ? &slot.name : nullptr;
  }

 private:
  struct Slot {
    std::once_flag once;
    std::string name;
    bool known = false;
  };
  int count_ = 0;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace

OperandPaths operand_paths(const GemmArgs& args) {
  // canonicalize() swaps A and B for a row-major C.
  const prod::Problem p = prod::canonicalize(args);
  return p.swapped ? OperandPaths{p.b.path, p.a.path, p.epilogue}
                   : OperandPaths{p.a.path, p.b.path, p.epilogue};
}

std::optional<int> config_index(std::string_view name) {
  for (int i = 0; i < prod::kConfigCount; ++i) {
    if (prod::kConfigs[static_cast<std::size_t>(i)].name == name) return i;
  }
  return std::nullopt;
}

const Entry* find(std::span<const Entry> table, std::string_view device_name,
                  const GemmArgs& args) {
  // Everything but the paths, which need canonicalize(): the range of entries
  // for this problem's sizes, at most one per path combination.
  const auto sizes = [](const Entry& e) {
    return std::tuple(e.device, e.in, e.out, e.a, e.b, e.c, e.m, e.n, e.k, e.batch_count);
  };
  const Entry probe{.device = device_name,
                    .in = args.a.dtype,
                    .out = args.c.dtype,
                    .a = args.a.layout,
                    .b = args.b.layout,
                    .c = args.c.layout,
                    .m = args.m,
                    .n = args.n,
                    .k = args.k,
                    .batch_count = args.batch_count,
                    .config = {},
                    .k_splits = 0};
  const auto [first, last] =
      std::equal_range(table.begin(), table.end(), probe,
                       [&sizes](const Entry& x, const Entry& y) { return sizes(x) < sizes(y); });
  if (first == last) return nullptr;
  const OperandPaths paths = operand_paths(args);
  for (auto it = first; it != last; ++it) {
    if (it->a_path == paths.a && it->b_path == paths.b && it->epilogue == paths.epilogue) {
      return &*it;
    }
  }
  return nullptr;
}

std::optional<prod::Choice> lookup(std::span<const Entry> table, std::string_view device_name,
                                   const GemmArgs& args) {
  const Entry* entry = find(table, device_name, args);
  if (entry == nullptr) return std::nullopt;
  const std::optional<int> config = config_index(entry->config);
  if (!config || entry->k_splits < 1) return std::nullopt;
  // A last-wave split reduces in place, which a row of several CTAs per SM
  // cannot, nor a tile's last piece adding more pieces than its row allows:
  // such an entry (edited by hand) is ignored, not launched.
  const prod::TileConfig& tile = prod::kConfigs[static_cast<std::size_t>(*config)].tile;
  if (entry->split_tail &&
      (tile.ctas_per_sm != 1 ||
       prod::effective_splits(args.k, entry->k_splits) > prod::max_in_place_splits(*config))) {
    return std::nullopt;
  }
  // Nor is an entry whose row cannot take the problem's B (a K-major-only
  // row named for a layout it was not timed on).
  if (!prod::takes_b(tile, prod::canonicalize(args, entry->flipped).b.major)) return std::nullopt;
  return prod::Choice{*config, entry->k_splits, /*separate_reduction=*/false, entry->split_tail,
                      entry->flipped};
}

std::optional<prod::Choice> lookup(std::string_view device_name, const GemmArgs& args) {
  return lookup(embedded_table(), device_name, args);
}

namespace {

// The current device's name, or nullptr when it cannot be queried (the
// error is cleared).
const std::string* current_device_name() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return nullptr;
  }
  static DeviceNames names;
  return names.name(device);
}

// set_table_override's entries, sorted.
std::vector<Entry>& override_entries() {
  static std::vector<Entry> entries;
  return entries;
}

}  // namespace

void set_table_override(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end(), key_less);
  override_entries() = std::move(entries);
}

std::span<const Entry> table_override() { return override_entries(); }

std::optional<prod::Choice> lookup_current_device(const GemmArgs& args) {
  const std::span<const Entry> table = embedded_table();
  const std::span<const Entry> overrides = table_override();
  if (table.empty() && overrides.empty()) return std::nullopt;
  if (args.sm_count > 0) {
    // The table's times are of the whole device; a call an SM budget
    // limits (GemmArgs::sm_count) is the heuristic's.
    int device = 0;
    int sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      return std::nullopt;
    }
    if (prod::budget_binds(args.sm_count, sms)) return std::nullopt;
  }
  const std::string* name = current_device_name();
  if (name == nullptr) return std::nullopt;
  // An override entry for the problem wins, whatever it holds (lookup()
  // then decides whether it is usable, as for an embedded one).
  if (find(overrides, *name, args) != nullptr) return lookup(overrides, *name, args);
  return lookup(table, *name, args);
}

}  // namespace tcgemm::tuned
