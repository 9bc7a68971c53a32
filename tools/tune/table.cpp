#include "table.h"

#include "sampling.h"
#include "sched/tile_order.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>
#include <type_traits>
#include <utility>

namespace tcgemm::tune {
namespace {

using nlohmann::json;

// cudaMalloc's alignment, which both tools give every operand allocation.
constexpr std::uintptr_t kAllocationAlignment = 256;

std::string_view path_name(prod::OperandPath p) {
  return p == prod::OperandPath::kTma ? "tma" : "repack";
}

std::string_view epilogue_name(prod::EpiloguePath e) {
  return e == prod::EpiloguePath::kTmaStore ? "tma_store" : "direct";
}

// Members are read through these, so a missing or mistyped one names itself.
template <typename T>
T member(const json& object, const char* name, const std::string& where);

// The member `name` of `object`, or TableError naming what is missing.
const json& find_member(const json& object, const char* name, const std::string& where) {
  if (!object.is_object()) throw TableError(where + ": not a JSON object");
  const auto it = object.find(name);
  if (it == object.end()) throw TableError(where + ": no member \"" + name + "\"");
  return *it;
}

// An integer member in [least, most]: a JSON integer, not a number nlohmann
// would convert (truncating 4096.7 to 4096, wrapping 1e30).
template <typename T>
T integer_member(const json& object, const char* name, const std::string& where, T least,
                 T most = std::numeric_limits<T>::max()) {
  const json& v = find_member(object, name, where);
  const bool fits =
      v.is_number_unsigned()
          ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(most) &&
                (least <= 0 || v.get<std::uint64_t>() >= static_cast<std::uint64_t>(least))
          : v.is_number_integer() && v.get<std::int64_t>() >= least &&
                v.get<std::int64_t>() <= most;
  if (!fits) {
    throw TableError(where + ": member \"" + name + "\" is " + v.dump() + ", not an integer from " +
                     std::to_string(least) + " to " + std::to_string(most));
  }
  return v.get<T>();
}

// An integer member that counts something: from 1 to `most`.
template <typename T>
T count_member(const json& object, const char* name, const std::string& where,
               T most = std::numeric_limits<T>::max()) {
  return integer_member<T>(object, name, where, 1, most);
}

// An optional boolean member: false when absent (null is neither).
bool flag_member(const json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end()) return false;
  if (!it->is_boolean()) {
    throw TableError(where + ": member \"" + name + "\" is " + it->dump() +
                     ", not true or false (or absent)");
  }
  return it->get<bool>();
}

// A name the library's table embeds as a C++ string literal: `config`
// (letters, digits, '_', '-') or, with `any_printable`, the GPU's name
// (printable ASCII). cmake/tuned_table.cmake refuses the same.
std::string name_member(const json& object, const char* name, const std::string& where,
                        bool any_printable) {
  std::string value = member<std::string>(object, name, where);
  const bool ok = !value.empty() && std::all_of(value.begin(), value.end(), [&](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return any_printable ? c >= 0x20 && c <= 0x7e : std::isalnum(c) || ch == '_' || ch == '-';
  });
  if (!ok) {
    throw TableError(where + ": member \"" + name + "\" is " + json(value).dump() +
                     (any_printable ? ", not a name of printable ASCII"
                                    : ", not a config name (letters, digits, '_', '-')"));
  }
  return value;
}

template <typename T>
T member(const json& object, const char* name, const std::string& where) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return integer_member<T>(object, name, where, std::numeric_limits<T>::min());
  } else {
    const json& v = find_member(object, name, where);
    try {
      return v.get<T>();
    } catch (const json::exception& e) {
      throw TableError(where + ": member \"" + name + "\": " + e.what());
    }
  }
}

template <typename T>
std::optional<T> optional_member(const json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::nullopt;
  return member<T>(object, name, where);
}

json optional_json(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

DType dtype_of(const std::string& name, const std::string& where) {
  const std::optional<DType> d = bench::parse_dtype(name);
  if (!d) throw TableError(where + ": \"" + name + "\" is not a dtype (bf16, fp16, fp32)");
  return *d;
}

prod::OperandPath operand_path_of(const std::string& name, const std::string& where) {
  if (name == "tma") return prod::OperandPath::kTma;
  if (name == "repack") return prod::OperandPath::kRepack;
  throw TableError(where + ": \"" + name + "\" is not an operand path (tma, repack)");
}

prod::EpiloguePath epilogue_of(const std::string& name, const std::string& where) {
  if (name == "tma_store") return prod::EpiloguePath::kTmaStore;
  if (name == "direct") return prod::EpiloguePath::kDirect;
  throw TableError(where + ": \"" + name + "\" is not an epilogue (tma_store, direct)");
}

json measured_json(const Measured& m) {
  json j = {{"config", m.config},
            {"k_splits", m.k_splits},
            {"ms", optional_json(m.ms)},
            {"status", m.status}};
  // Only when set: files keep their form for every other choice.
  if (m.split_tail) j["split_tail"] = true;
  if (m.flipped) j["flipped"] = true;
  return j;
}

// An optional time: a finite number of milliseconds from a nanosecond (no
// launch is shorter) to a thousand seconds (no timed launch is longer):
// anything else would turn the report's slowdowns into nonsense (a ratio of
// 1e308 to 1e-6 prints "infx").
std::optional<double> time_member(const json& j, const char* name, const std::string& where) {
  constexpr double kShortestMs = 1e-6;
  constexpr double kLongestMs = 1e6;
  const std::optional<double> ms = optional_member<double>(j, name, where);
  if (ms && !(*ms >= kShortestMs && *ms <= kLongestMs)) {
    const std::string value = std::isfinite(*ms)  ? json(*ms).dump()
                              : std::isnan(*ms) ? std::string("NaN")
                                                : std::string("infinite");
    throw TableError(where + ": \"" + name + "\" is " + value +
                     ", not a time of 1e-6 to 1e6 milliseconds");
  }
  return ms;
}

Measured measured_of(const json& j, const std::string& where) {
  // Only a verified choice has a time.
  const std::optional<double> ms = time_member(j, "ms", where);
  const std::string status = member<std::string>(j, "status", where);
  if (ms && status != "ok") {
    throw TableError(where + ": \"status\" is \"" + status +
                     "\" but \"ms\" is set: only a verified (\"ok\") choice has a time");
  }
  // split_tail, flipped: absent in files from before they existed (every
  // tile split; the native orientation).
  return {name_member(j, "config", where, /*any_printable=*/false),
          count_member<int>(j, "k_splits", where, kMaxKSplits),
          ms,
          status,
          flag_member(j, "split_tail", where),
          flag_member(j, "flipped", where)};
}

json shape_json(const TunedShape& s) {
  json candidates = json::array();
  for (const CandidateTiming& c : s.candidates) {
    json j = measured_json(c.measured);
    j["min_ms"] = optional_json(c.min_ms);
    j["max_ms"] = optional_json(c.max_ms);
    j["launches_per_sample"] = c.launches_per_sample;
    j["rel_err"] = optional_json(c.rel_err);
    candidates.push_back(std::move(j));
  }
  const ShapeKey& k = s.key;
  return {
      {"m", k.m},
      {"n", k.n},
      {"k", k.k},
      {"batch", k.batch},
      {"dtype", to_string(k.in)},
      {"out_dtype", to_string(k.out)},
      {"layout", bench::layouts_name(k.layouts)},
      {"a_path", path_name(k.paths.a)},
      {"b_path", path_name(k.paths.b)},
      {"epilogue", epilogue_name(k.paths.epilogue)},
      {"tuned", s.tuned ? measured_json(*s.tuned) : json(nullptr)},
      {"heuristic", measured_json(s.heuristic)},
      {"candidates", std::move(candidates)},
      {"l2_sets", s.l2_sets},
      {"reps", s.reps},
      {"timed_at", s.timed_at},
  };
}

TunedShape shape_of(const json& j, const std::string& where) {
  TunedShape s;
  ShapeKey& k = s.key;
  k.m = count_member<std::int64_t>(j, "m", where, kMaxExtent);
  k.n = count_member<std::int64_t>(j, "n", where, kMaxExtent);
  k.k = count_member<std::int64_t>(j, "k", where, kMaxExtent);
  k.batch = count_member<std::int64_t>(j, "batch", where, kMaxExtent);
  k.in = dtype_of(member<std::string>(j, "dtype", where), where);
  if (k.in == DType::kFP32)
    throw TableError(where + ": \"dtype\" is fp32: inputs are bf16 or fp16");
  k.out = dtype_of(member<std::string>(j, "out_dtype", where), where);
  const std::string layout = member<std::string>(j, "layout", where);
  const std::optional<bench::OperandLayouts> layouts = bench::parse_layouts(layout);
  if (!layouts) throw TableError(where + ": \"" + layout + "\" is not a layout (tn, tnr, ...)");
  k.layouts = *layouts;
  k.paths.a = operand_path_of(member<std::string>(j, "a_path", where), where);
  k.paths.b = operand_path_of(member<std::string>(j, "b_path", where), where);
  k.paths.epilogue = epilogue_of(member<std::string>(j, "epilogue", where), where);
  // "tuned" is null when no candidate verified, never absent.
  if (!find_member(j, "tuned", where).is_null()) {
    s.tuned = measured_of(j.at("tuned"), where + ".tuned");
    // The winner is what the dispatcher will run: it verified and was timed.
    if (s.tuned->status != "ok" || !s.tuned->ms) {
      throw TableError(where + ".tuned: a winner must have verified and been timed (\"status\" "
                       "\"ok\" and \"ms\" set), got status \"" + s.tuned->status + "\"");
    }
  }
  s.heuristic = measured_of(find_member(j, "heuristic", where), where + ".heuristic");
  const json& candidates = find_member(j, "candidates", where);
  if (!candidates.is_array()) throw TableError(where + ": \"candidates\" is not an array");
  std::optional<Measured> fastest;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string at = where + ".candidates[" + std::to_string(i) + "]";
    const json& c = candidates[i];
    CandidateTiming t{measured_of(c, at), time_member(c, "min_ms", at),
                      time_member(c, "max_ms", at), count_member<int>(c, "launches_per_sample", at),
                      optional_member<double>(c, "rel_err", at)};
    // A median lies between the fastest and the slowest sample.
    const std::optional<double>& ms = t.measured.ms;
    if ((t.min_ms && (!ms || *t.min_ms > *ms)) || (t.max_ms && (!ms || *t.max_ms < *ms))) {
      throw TableError(at + ": \"min_ms\" <= \"ms\" <= \"max_ms\" does not hold");
    }
    if (t.rel_err && !(*t.rel_err >= 0.0 && std::isfinite(*t.rel_err))) {
      throw TableError(at + ": \"rel_err\" is not a finite error >= 0");
    }
    if (ms && (!fastest || *ms < *fastest->ms)) fastest = t.measured;
    s.candidates.push_back(std::move(t));
  }
  // The winner and the heuristic's choice are candidates the same loop timed
  // (tuner.cpp): the winner the fastest of them, or none when none was timed.
  const auto is_candidate = [&](const Measured& m) {
    return std::any_of(s.candidates.begin(), s.candidates.end(),
                       [&](const CandidateTiming& c) { return c.measured == m; });
  };
  if (s.tuned && !is_candidate(*s.tuned)) {
    throw TableError(where + ".tuned: " + choice_name(*s.tuned) +
                     " is not one of the shape's candidates with that time");
  }
  if (s.tuned && *s.tuned->ms != *fastest->ms) {
    throw TableError(where + ".tuned: " + choice_name(*s.tuned) +
                     " is not the fastest candidate (" + choice_name(*fastest) + " is)");
  }
  if (!s.tuned && fastest) {
    throw TableError(where + ": \"tuned\" is null but candidate " + choice_name(*fastest) +
                     " has a time");
  }
  if (!is_candidate(s.heuristic)) {
    throw TableError(where + ".heuristic: " + choice_name(s.heuristic) +
                     " is not one of the shape's candidates with that status and time");
  }
  s.l2_sets = count_member<int>(j, "l2_sets", where);
  s.reps = integer_member<int>(j, "reps", where, fastest ? 1 : 0);
  s.timed_at = member<std::string>(j, "timed_at", where);
  return s;
}

// printf into a string of whatever length the text takes.
template <typename... Args>
std::string formatted(const char* format, Args... args) {
  const int size = std::snprintf(nullptr, 0, format, args...);
  std::string text(static_cast<std::size_t>(std::max(size, 0)), '\0');
  std::snprintf(text.data(), text.size() + 1, format, args...);
  return text;
}

std::string format_ms(const std::optional<double>& ms) {
  if (!ms) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", *ms);
  return text;
}

std::string elapsed_text(double seconds) {
  const auto total = static_cast<long long>(std::max(seconds, 0.0));
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60,
                  total % 60);
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", total / 60, total % 60);
  }
  return text;
}

}  // namespace

std::string choice_name(const Measured& m) {
  return m.config + (m.k_splits > 1 ? " k" + std::to_string(m.k_splits) : std::string()) +
         (m.k_splits > 1 && m.split_tail ? " tail" : "") + (m.flipped ? " flipped" : "");
}

bool ShapeKey::operator==(const ShapeKey& o) const {
  return m == o.m && n == o.n && k == o.k && batch == o.batch && in == o.in && out == o.out &&
         layouts.a == o.layouts.a && layouts.b == o.layouts.b && layouts.c == o.layouts.c &&
         paths == o.paths;
}

ShapeKey key_of(const bench::Problem& problem) {
  // Only the addresses' alignment reaches the key; nothing is dereferenced.
  auto* const base = reinterpret_cast<std::byte*>(kAllocationAlignment);
  const GemmArgs args = bench::make_args(problem, base, base, base, nullptr);
  return {.m = problem.m,
          .n = problem.n,
          .k = problem.k,
          .batch = problem.batch,
          .in = problem.input,
          .out = problem.output,
          .layouts = problem.layouts,
          .paths = tuned::operand_paths(args)};
}

std::string shape_name(const ShapeKey& key) {
  std::string name = key.batch > 1 ? std::to_string(key.batch) + " x " : std::string();
  name += std::to_string(key.m) + "x" + std::to_string(key.n) + "x" + std::to_string(key.k) + " " +
          std::string(to_string(key.in));
  if (key.out != key.in) name += "->" + std::string(to_string(key.out));
  name += ' ';
  name += bench::layouts_name(key.layouts);
  if (key.paths.a != prod::OperandPath::kTma) name += " a=" + std::string(path_name(key.paths.a));
  if (key.paths.b != prod::OperandPath::kTma) name += " b=" + std::string(path_name(key.paths.b));
  if (key.paths.epilogue != prod::EpiloguePath::kTmaStore) {
    name += " epilogue=" + std::string(epilogue_name(key.paths.epilogue));
  }
  return name;
}

const TunedShape* TunedTable::find(const ShapeKey& key) const {
  const auto it = std::find_if(shapes.begin(), shapes.end(),
                               [&key](const TunedShape& s) { return s.key == key; });
  return it == shapes.end() ? nullptr : &*it;
}

void TunedTable::upsert(TunedShape shape) {
  const auto it = std::find_if(shapes.begin(), shapes.end(),
                               [&shape](const TunedShape& s) { return s.key == shape.key; });
  if (it == shapes.end()) {
    shapes.push_back(std::move(shape));
  } else {
    *it = std::move(shape);
  }
}

nlohmann::json to_json(const TunedTable& table) {
  const TableHeader& h = table.header;
  json shapes = json::array();
  for (const TunedShape& s : table.shapes) shapes.push_back(shape_json(s));
  return {
      {"format", kFormat},
      {"format_version", kFormatVersion},
      {"gpu", {{"name", h.gpu_name}, {"sm_count", h.sm_count}}},
      {"library_version", h.library_version},
      {"source", h.source},
      {"created", h.created},
      {"updated", h.updated},
      {"method",
       {{"warmup", h.method.warmup},
        {"reps", h.method.reps},
        {"long_reps", h.method.long_reps},
        {"long_ms", h.method.long_ms},
        {"max_candidates", h.method.max_candidates},
        {"statistic", "median"},
        {"timing", "interleaved CUDA events, L2-rotated operand sets (docs/benchmarking.md)"}}},
      {"shapes", std::move(shapes)},
  };
}

TunedTable from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw TableError(origin + ": not a JSON object");
  const std::string format = member<std::string>(j, "format", origin);
  const int version = member<int>(j, "format_version", origin);
  if (format != kFormat || version != kFormatVersion) {
    throw TableError(origin + ": not a " + std::string(kFormat) + " file of format version " +
                     std::to_string(kFormatVersion) + " (format \"" + format + "\", version " +
                     std::to_string(version) + ")");
  }
  TunedTable table;
  TableHeader& h = table.header;
  const json& gpu = find_member(j, "gpu", origin);
  h.gpu_name = name_member(gpu, "name", origin + ".gpu", /*any_printable=*/true);
  h.sm_count = count_member<int>(gpu, "sm_count", origin + ".gpu");
  h.library_version = member<std::string>(j, "library_version", origin);
  h.source = member<std::string>(j, "source", origin);
  h.created = member<std::string>(j, "created", origin);
  h.updated = member<std::string>(j, "updated", origin);
  const std::string at = origin + ".method";
  const json& method = find_member(j, "method", origin);
  h.method = {count_member<int>(method, "warmup", at), count_member<int>(method, "reps", at),
              count_member<int>(method, "long_reps", at), member<double>(method, "long_ms", at),
              integer_member<int>(method, "max_candidates", at, 0)};
  if (!(h.method.long_ms >= 0.0) || !std::isfinite(h.method.long_ms)) {
    throw TableError(at + ": member \"long_ms\" is " + json(h.method.long_ms).dump() +
                     ", not a finite number of milliseconds >= 0");
  }
  const json& shapes = find_member(j, "shapes", origin);
  if (!shapes.is_array()) throw TableError(origin + ": \"shapes\" is not an array");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string where = origin + ".shapes[" + std::to_string(i) + "]";
    TunedShape shape = shape_of(shapes[i], where);
    // One entry per problem (the library's build refuses a pair too).
    if (table.find(shape.key) != nullptr) {
      throw TableError(where + ": the same problem as an earlier entry (" + shape_name(shape.key) +
                       ")");
    }
    table.shapes.push_back(std::move(shape));
  }
  return table;
}

std::optional<TunedTable> load_table(const std::filesystem::path& path) {
  std::error_code ec;
  const bool present = std::filesystem::exists(path, ec);
  // (A symlink loop or a directory that cannot be searched is not "absent".)
  if (ec) throw TableError(path.string() + ": cannot be read: " + ec.message());
  if (!present) return std::nullopt;
  if (std::filesystem::is_directory(path, ec)) {
    throw TableError(path.string() + ": is a directory, not a tuned-table file");
  }
  std::ifstream in(path);
  if (!in) throw TableError(path.string() + ": cannot be opened");
  // A table nests five levels deep (shapes, a shape, its candidates, one of
  // them, its values). Past a few more the file is not one, and a deep
  // enough nesting would overflow the stack of the recursive json copies.
  constexpr int kMaxDepth = 16;
  const auto depth_limit = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) {
      throw TableError(path.string() + ": nests values more than " + std::to_string(kMaxDepth) +
                       " levels deep (a tuned table nests five)");
    }
    return true;
  };
  json j;
  try {
    j = json::parse(in, depth_limit);
  } catch (const json::exception& e) {
    throw TableError(path.string() + ": not valid JSON: " + e.what());
  } catch (const std::ios_base::failure& e) {
    // A read that fails part-way (an I/O error, a file like /proc/self/mem).
    throw TableError(path.string() + ": cannot be read: " + e.what());
  }
  return from_json(j, path.string());
}

void save_table(const std::filesystem::path& path, const TunedTable& table) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw TableError(path.parent_path().string() + ": cannot be created: " + ec.message());
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << to_json(table).dump(2) << '\n';
    out.close();
    if (!out) throw TableError(tmp.string() + ": cannot be written");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    throw TableError(tmp.string() + ": cannot be renamed to " + path.string() + ": " +
                     ec.message());
}

std::string check_resumable(const TableHeader& file, const TableHeader& now, bool force) {
  if (file.gpu_name != now.gpu_name || file.sm_count != now.sm_count) {
    return "it holds a table for " + file.gpu_name + " (" + std::to_string(file.sm_count) +
           " SMs), not this " + now.gpu_name + " (" + std::to_string(now.sm_count) +
           " SMs): give another --out";
  }
  if (file.library_version != now.library_version && !force) {
    return "it was tuned with tcgemm " + file.library_version + ", this is " + now.library_version +
           ": --force starts it afresh";
  }
  return {};
}

bool already_tuned(const TunedTable& table, const ShapeKey& key, bool force) {
  if (force) return false;
  const TunedShape* shape = table.find(key);
  return shape != nullptr && shape->tuned.has_value();
}

TunedShape with_heuristic(const TunedShape& shape, const Measured& choice) {
  TunedShape out = shape;
  out.heuristic = Measured{choice.config, choice.k_splits, std::nullopt, "not timed",
                           choice.k_splits > 1 && choice.split_tail, choice.flipped};
  for (const CandidateTiming& c : shape.candidates) {
    const Measured& m = c.measured;
    if (m.config == out.heuristic.config && m.k_splits == out.heuristic.k_splits &&
        (m.k_splits > 1 && m.split_tail) == out.heuristic.split_tail &&
        m.flipped == out.heuristic.flipped) {
      out.heuristic = m;
      break;
    }
  }
  return out;
}

std::optional<double> slowdown(const TunedShape& shape) {
  if (!shape.tuned || !shape.tuned->ms || !shape.heuristic.ms || !(*shape.tuned->ms > 0.0)) {
    return std::nullopt;
  }
  return *shape.heuristic.ms / *shape.tuned->ms;
}

ReportSummary summarize(std::span<const TunedShape> shapes) {
  ReportSummary s;
  double log_sum = 0.0;
  for (const TunedShape& shape : shapes) {
    ++s.shapes;
    if (!shape.tuned) {
      ++s.untuned;
      continue;
    }
    const std::optional<double> slow = slowdown(shape);
    if (!slow) {
      ++s.heuristic_failed;
      continue;
    }
    ++s.compared;
    log_sum += std::log(*slow);
    if (!s.worst_shape || *slow > s.worst) {
      s.worst = *slow;
      s.worst_shape = shape.key;
    }
  }
  if (s.compared > 0) s.geomean = std::exp(log_sum / s.compared);
  return s;
}

std::string format_report(std::span<const TunedShape> shapes) {
  const auto tuned_text = [](const TunedShape& s) {
    return s.tuned ? choice_name(*s.tuned) : std::string("none verified");
  };
  const auto heuristic_text = [](const TunedShape& s) {
    return choice_name(s.heuristic) + (s.heuristic.status == "ok" ? "" : " " + s.heuristic.status);
  };
  // Columns as wide as their longest entry (at least 22 for the choices).
  std::size_t name_width = 5;
  std::size_t tuned_width = 22;
  std::size_t heuristic_width = 22;
  for (const TunedShape& s : shapes) {
    name_width = std::max(name_width, shape_name(s.key).size());
    tuned_width = std::max(tuned_width, tuned_text(s).size());
    heuristic_width = std::max(heuristic_width, heuristic_text(s).size());
  }
  const int width = static_cast<int>(name_width);
  const int tw = static_cast<int>(tuned_width);
  const int hw = static_cast<int>(heuristic_width);
  std::ostringstream out;
  out << formatted("%-*s  %-*s %10s  %-*s %10s  %8s\n", width, "shape", tw, "tuned", "ms", hw,
                   "heuristic", "ms", "slowdown");
  for (const TunedShape& s : shapes) {
    const std::optional<double> slow = slowdown(s);
    out << formatted("%-*s  %-*s %10s  %-*s %10s  %8s\n", width, shape_name(s.key).c_str(), tw,
                     tuned_text(s).c_str(), format_ms(s.tuned ? s.tuned->ms : std::nullopt).c_str(),
                     hw, heuristic_text(s).c_str(), format_ms(s.heuristic.ms).c_str(),
                     slow ? formatted("%.3fx", *slow).c_str() : "-");
  }
  const ReportSummary sum = summarize(shapes);
  if (sum.compared == 0) {
    out << "heuristic vs tuned: none of the " << sum.shapes
        << " shape(s) has both times to compare\n";
  } else {
    out << formatted(
        "heuristic vs tuned over %d of %d shapes: worst %.3fx%s, geometric mean %.3fx\n",
        sum.compared, sum.shapes, sum.worst,
        sum.worst_shape ? (" (" + shape_name(*sum.worst_shape) + ")").c_str() : "", sum.geomean);
  }
  if (sum.heuristic_failed > 0) {
    out << sum.heuristic_failed
        << " shape(s) whose heuristic choice has no time (it failed to verify, or the file never "
           "timed it)\n";
  }
  if (sum.untuned > 0) out << sum.untuned << " shape(s) with no verified candidate\n";
  return out.str();
}

std::vector<TunedShape> select_shapes(const TunedTable& table, std::span<const ShapeKey> keys) {
  if (keys.empty()) return table.shapes;
  std::vector<TunedShape> out;
  for (const ShapeKey& key : keys) {
    if (const TunedShape* s = table.find(key)) out.push_back(*s);
  }
  return out;
}

std::string progress_line(std::size_t done, std::size_t total, std::string_view activity,
                          double elapsed_s, std::size_t width) {
  constexpr std::size_t kMinBar = 10;
  constexpr std::size_t kMaxBar = 40;
  const std::string counts =
      ' ' + std::to_string(done) + '/' + std::to_string(total) + std::string(" shapes  ");
  const std::string tail = std::string("  ") + elapsed_text(elapsed_s);
  std::string text(activity);
  const std::size_t fixed = counts.size() + tail.size() + 2;  // the bar's brackets
  const std::size_t left = width > fixed + text.size() ? width - fixed - text.size() : 0;
  const std::size_t bar = std::clamp(left, kMinBar, kMaxBar);
  // Shorten the activity, not the bar, when the line would not fit.
  const std::size_t room = width > fixed + bar ? width - fixed - bar : 0;
  if (text.size() > room) text = room > 3 ? text.substr(0, room - 3) + "..." : std::string();
  const std::size_t filled = total == 0 ? bar : bar * std::min(done, total) / total;
  std::string line(1, '[');
  line.append(filled, '#').append(bar - filled, '.').append(1, ']');
  return line + counts + text + tail;
}

std::string file_slug(std::string_view gpu_name) {
  std::string slug;
  for (const char ch : gpu_name) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      slug += static_cast<char>(std::tolower(c));
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "gpu" : slug;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::optional<GemmArgs> timed_args(const ShapeKey& key) {
  const bench::Problem problem =
      bench::make_problem(bench::Shape{.m = key.m, .n = key.n, .k = key.k, .batch = key.batch},
                          key.in, key.out, key.layouts, 1.0f, 0.0f);
  if (!(key_of(problem) == key)) return std::nullopt;
  auto* const base = reinterpret_cast<std::byte*>(std::uintptr_t{1} << 30);
  return bench::make_args(problem, base, base, base, nullptr);
}

std::vector<TileRate> tile_rates(const TunedTable& table, const prod::DeviceModel& device) {
  std::vector<std::vector<double>> samples(prod::kConfigs.size());
  for (const TunedShape& shape : table.shapes) {
    const ShapeKey& key = shape.key;
    const double flops = 2.0 * static_cast<double>(key.m) * static_cast<double>(key.n) *
                         static_cast<double>(key.k) * static_cast<double>(key.batch);
    if (flops < kRateMinFlops || std::min(key.m, key.n) < kRateMinSide) continue;
    // Each row's plain launch: unsplit, in C's own orientation.
    std::vector<std::optional<double>> ms(prod::kConfigs.size());
    for (const CandidateTiming& c : shape.candidates) {
      const Measured& m = c.measured;
      if (m.status != "ok" || !m.ms || m.k_splits != 1 || m.split_tail || m.flipped) continue;
      if (const std::optional<int> config = tuned::config_index(m.config)) {
        ms[static_cast<std::size_t>(*config)] = m.ms;
      }
    }
    const std::optional<GemmArgs> args = timed_args(key);
    if (!ms[0] || !args) continue;
    const prod::Problem canonical = prod::canonicalize(*args);
    // Padded work per CTA slot, in units of K: rounds x BM x BN x CTAs per SM.
    const auto work = [&](int config) {
      const prod::TileConfig& t = prod::kConfigs[static_cast<std::size_t>(config)].tile;
      const std::int64_t units = prod::work_units(canonical, config);
      const std::int64_t resident = std::max<std::int64_t>(prod::resident_units(device, t), 1);
      return static_cast<double>(sched::ceil_div(units, resident)) * t.bm * t.bn * t.ctas_per_sm;
    };
    const double base_work = work(0);
    for (int config = 0; config < prod::kConfigCount; ++config) {
      const std::optional<double>& t = ms[static_cast<std::size_t>(config)];
      if (!t || *t <= 0.0) continue;
      samples[static_cast<std::size_t>(config)].push_back(*ms[0] / *t * work(config) / base_work);
    }
  }
  std::vector<TileRate> out;
  for (int config = 0; config < prod::kConfigCount; ++config) {
    std::vector<double>& v = samples[static_cast<std::size_t>(config)];
    if (v.empty()) continue;
    out.push_back({config, bench::median(v), static_cast<int>(v.size())});
  }
  return out;
}

std::string format_rates(std::span<const TileRate> rates) {
  std::ostringstream out;
  out << formatted("%-18s %9s %9s %9s\n", "config", "measured", "assumed", "problems");
  for (const TileRate& r : rates) {
    const prod::ConfigEntry& e = prod::kConfigs[static_cast<std::size_t>(r.config)];
    out << formatted("%-18s %9.2f %9s %9d\n", std::string(e.name).c_str(), r.median,
                     e.estimated ? formatted("%.2f", e.throughput_pct / 100.0).c_str() : "-",
                     r.problems);
  }
  out << "(per-tile rate relative to " << prod::kConfigs[0].name
      << ", wave quantization taken out; \"assumed\": the heuristic's throughput_pct, \"-\" "
         "for a row it does not estimate)\n";
  return out.str();
}

std::vector<tuned::Entry> entries_of(const TunedTable& table) {
  std::vector<tuned::Entry> out;
  for (const TunedShape& shape : table.shapes) {
    if (!shape.tuned) continue;
    const ShapeKey& k = shape.key;
    out.push_back({.device = table.header.gpu_name,
                   .in = k.in,
                   .out = k.out,
                   .a = k.layouts.a,
                   .b = k.layouts.b,
                   .c = k.layouts.c,
                   .a_path = k.paths.a,
                   .b_path = k.paths.b,
                   .epilogue = k.paths.epilogue,
                   .m = k.m,
                   .n = k.n,
                   .k = k.k,
                   .batch_count = k.batch,
                   .config = shape.tuned->config,
                   .k_splits = shape.tuned->k_splits,
                   .split_tail = shape.tuned->split_tail,
                   .flipped = shape.tuned->flipped});
  }
  return out;
}

}  // namespace tcgemm::tune
