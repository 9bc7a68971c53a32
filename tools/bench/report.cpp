#include "report.h"

#include <nlohmann/json.hpp>

#include "git_describe.h"  // generated at build time: TCGEMM_GIT_DESCRIBE

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace tcgemm::bench {
namespace {

// Keys in insertion order, so a result reads M, N, K, ... as in the CSV.
using Json = nlohmann::ordered_json;

// The numbers a row is reported with, derived once for table, CSV and JSON.
struct Derived {
  std::optional<double> tflops;
  std::optional<double> cublas_tflops;
  std::optional<double> ratio;  // ours / cuBLAS, from the same run (RunInfo::timing)
};

Derived derive(const Result& r) {
  const auto tflops = [&r](double ms) { return flops(r.problem) / (ms * 1e-3) / 1e12; };
  Derived d;
  if (r.timing) d.tflops = tflops(r.timing->median_ms);
  if (r.cublas_ms) d.cublas_tflops = tflops(*r.cublas_ms);
  if (d.tflops && d.cublas_tflops) d.ratio = *d.tflops / *d.cublas_tflops;
  return d;
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list measure;
  va_copy(measure, args);
  const int length = std::vsnprintf(nullptr, 0, fmt, measure);
  va_end(measure);
  std::string text(static_cast<std::size_t>(std::max(length, 0)) + 1, '\0');
  std::vsnprintf(text.data(), text.size(), fmt, args);
  va_end(args);
  text.pop_back();  // vsnprintf's terminating NUL
  return text;
}

std::string format_optional(const std::optional<double>& v, const char* fmt) {
  return v ? format(fmt, *v) : std::string("-");
}

std::string dtype_label(const Problem& p) {
  std::string label(to_string(p.input));
  if (p.output != p.input) {
    label += '>';
    label += to_string(p.output);
  }
  return label;
}

// "-" for tight leading dimensions, "+8" when all three carry the same
// padding, otherwise the three values.
std::string ld_label(const Problem& p) {
  const std::int64_t pad_a = p.lda - tight_ld(p.m, p.k, p.layouts.a);
  const std::int64_t pad_b = p.ldb - tight_ld(p.k, p.n, p.layouts.b);
  const std::int64_t pad_c = p.ldc - tight_ld(p.m, p.n, p.layouts.c);
  if (pad_a == pad_b && pad_b == pad_c) {
    return pad_a == 0 ? std::string("-") : format("+%lld", static_cast<long long>(pad_a));
  }
  return std::to_string(p.lda) + "," + std::to_string(p.ldb) + "," + std::to_string(p.ldc);
}

// The batch count, with each stride that is not tight: "1", "8",
// "8 stride_a=0".
std::string batch_label(const Problem& p) {
  std::string label = std::to_string(p.batch);
  if (p.batch == 1) return label;
  const struct {
    const char* name;
    Operand operand;
    std::int64_t stride;
  } strides[] = {{"stride_a", Operand::kA, p.stride_a},
                 {"stride_b", Operand::kB, p.stride_b},
                 {"stride_c", Operand::kC, p.stride_c}};
  for (const auto& s : strides) {
    if (s.stride != tight_stride(p, s.operand)) {
      label += format(" %s=%lld", s.name, static_cast<long long>(s.stride));
    }
  }
  return label;
}

// A field that does not apply with one batch entry: empty in the CSV, null in
// the JSON.
std::optional<std::int64_t> batch_stride(const Problem& p, std::int64_t stride) {
  return p.batch > 1 ? std::optional<std::int64_t>(stride) : std::nullopt;
}

// RFC 4180: quote a field holding a separator, quote or newline.
std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char ch : value) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

std::string csv_number(const std::optional<double>& v) {
  return v ? format("%.6g", *v) : std::string();
}

template <typename T>
Json nullable(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json json_clocks(const Clocks& c) {
  return {{"sm_mhz", nullable(c.sm_mhz)}, {"memory_mhz", nullable(c.memory_mhz)}};
}

}  // namespace

std::vector<std::string> header_lines(const RunInfo& info) {
  const DeviceInfo& d = info.device;
  constexpr double kMiB = 1024.0 * 1024.0;
  std::vector<std::string> lines = {
      format("GPU %d: %s, sm_%d, %d SMs, L2 %.1f MiB, memory %.1f GiB, PCI %s", d.device,
             d.name.c_str(), d.compute_capability, d.sm_count,
             static_cast<double>(d.l2_bytes) / kMiB,
             static_cast<double>(d.memory_bytes) / (kMiB * 1024.0), d.pci_bus_id.c_str()),
      "CUDA driver " + d.driver_version + ", runtime " + d.runtime_version + ", nvcc " +
          d.nvcc_version + ", cuBLAS " + d.cublas_version,
      std::string("tcgemm source: ") + TCGEMM_GIT_DESCRIBE,
      "clocks at start: " + to_string(info.clocks_start),
  };
  if (info.clocks_end) lines.push_back("clocks at end: " + to_string(*info.clocks_end));
  lines.push_back("timing: " + info.timing);
  lines.push_back("seed: " + std::to_string(info.seed));
  lines.push_back("command: " + info.command);
  return lines;
}

void print_table(std::FILE* out, const std::vector<Result>& results) {
  std::size_t kernel_w = 6;
  std::size_t batch_w = 5;
  std::size_t dtype_w = 5;
  std::size_t ld_w = 2;
  for (const Result& r : results) {
    kernel_w = std::max(kernel_w, r.kernel.size());
    batch_w = std::max(batch_w, batch_label(r.problem).size());
    dtype_w = std::max(dtype_w, dtype_label(r.problem).size());
    ld_w = std::max(ld_w, ld_label(r.problem).size());
  }
  const auto kw = static_cast<int>(kernel_w);
  const auto bw = static_cast<int>(batch_w);
  const auto dw = static_cast<int>(dtype_w);
  const auto lw = static_cast<int>(ld_w);
  // The status and the config come last: they vary most in length. A
  // registry row's config is fixed by its name (and in the result files), so
  // the table gives it only for the rows whose name does not say what ran:
  // tcgemm (the dispatcher's pick) and cuBLAS (the call).
  std::fprintf(out, "%-*s %6s %6s %6s %-*s  %-*s %-6s %-*s %6s %10s %8s %8s %6s %8s  %s  %s\n", kw,
               "kernel", "M", "N", "K", bw, "batch", dw, "dtype", "layout", lw, "ld", "offset",
               "ms", "TFLOP/s", "cuBLAS", "ratio", "rel_err", "status", "config");
  for (const Result& r : results) {
    const Problem& p = r.problem;
    const Derived d = derive(r);
    const std::string median = r.timing ? format("%.4f", r.timing->median_ms) : "-";
    const std::string rel_err = r.error ? format("%.1e", r.error->rel_fro) : "-";
    const bool show_config = r.kind != Contender::Kind::kRegistry && !r.config.empty();
    std::fprintf(
        out, "%-*s %6lld %6lld %6lld %-*s  %-*s %-6s %-*s %6lld %10s %8s %8s %6s %8s  %s  %s\n", kw,
        r.kernel.c_str(), static_cast<long long>(p.m), static_cast<long long>(p.n),
        static_cast<long long>(p.k), bw, batch_label(p).c_str(), dw, dtype_label(p).c_str(),
        layouts_name(p.layouts).c_str(), lw, ld_label(p).c_str(), static_cast<long long>(p.offset),
        median.c_str(), format_optional(d.tflops, "%.1f").c_str(),
        format_optional(d.cublas_tflops, "%.1f").c_str(), format_optional(d.ratio, "%.2f").c_str(),
        rel_err.c_str(), r.status.c_str(), show_config ? r.config.c_str() : "-");
  }
}

void print_hazard_intro(std::FILE* out, int runs) {
  std::fprintf(out,
               "hazard mode: %d runs per kernel, each on fresh random inputs (run i, from 1, uses "
               "seed + 3 (i - 1)), checked against the reference GEMM and against an immediate "
               "re-run on the same inputs; nothing is timed\n",
               runs);
}

void print_hazard_problem(std::FILE* out, std::span<const HazardReport> reports) {
  if (reports.empty()) return;
  const Problem& p = reports.front().problem;
  const double tolerance = testing::tolerance_for(p.output);
  std::fprintf(out,
               "\n%lldx%lldx%lld %s %s, batch %s, ld %s, offset %lld, alpha %g, beta %g: a run is "
               "wrong when C has a non-finite element or rel_err >= %.0e (in any batch entry), or "
               "when an element of its small-integer run is inexact (inexact; not for cuBLAS)\n",
               static_cast<long long>(p.m), static_cast<long long>(p.n),
               static_cast<long long>(p.k), dtype_label(p).c_str(), layouts_name(p.layouts).c_str(),
               batch_label(p).c_str(), ld_label(p).c_str(), static_cast<long long>(p.offset),
               static_cast<double>(p.alpha), static_cast<double>(p.beta), tolerance);
  std::fprintf(out, "%s\n", hazard_table_header().c_str());
  for (const HazardReport& r : reports) {
    for (const HazardRun& run : r.runs) {
      std::fprintf(out, "%s\n", format_hazard_run(r.kernel, run, tolerance).c_str());
    }
  }
  std::fprintf(out, "summary:\n");
  for (const HazardReport& r : reports) {
    // The dispatcher's row says what it ran (a registry row's name does).
    if (r.kind == Contender::Kind::kDispatcher && !r.config.empty()) {
      std::fprintf(out, "%s runs %s\n", r.kernel.c_str(), r.config.c_str());
    }
    if (r.runs.empty()) {
      std::fprintf(out, "%s: %s\n", r.kernel.c_str(), r.status.c_str());
      continue;
    }
    std::fprintf(
        out, "%s\n",
        format_hazard_summary(r.kernel, summarize_hazard(r.runs, tolerance), tolerance).c_str());
    if (r.status != "ran") std::fprintf(out, "%s: then %s\n", r.kernel.c_str(), r.status.c_str());
  }
}

void write_csv(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  for (const std::string& line : header_lines(info)) out << "# " << line << '\n';
  out << "M,N,K,batch,dtype,out_dtype,layout,lda,ldb,ldc,stride_a,stride_b,stride_c,offset,"
         "kernel,config,median_ms,min_ms,max_ms,tflops,cublas_tflops,ratio,rel_err,max_abs_err,"
         "status,gpu,sm_clock_mhz,seed,command,alpha,beta,l2_sets,launches_per_sample,"
         "exact_mismatches\n";
  for (const Result& r : results) {
    const Problem& p = r.problem;
    const Derived d = derive(r);
    const auto timing_field = [&r](double Timing::*field) {
      return r.timing ? csv_number((*r.timing).*field) : std::string();
    };
    const auto stride_field = [&p](std::int64_t stride) {
      const std::optional<std::int64_t> v = batch_stride(p, stride);
      return v ? std::to_string(*v) : std::string();
    };
    out << p.m << ',' << p.n << ',' << p.k << ',' << p.batch << ',' << to_string(p.input) << ','
        << to_string(p.output) << ',' << layouts_name(p.layouts) << ',' << p.lda << ',' << p.ldb
        << ',' << p.ldc << ',' << stride_field(p.stride_a) << ',' << stride_field(p.stride_b) << ','
        << stride_field(p.stride_c) << ',' << p.offset << ',' << csv_field(r.kernel) << ','
        << csv_field(r.config) << ',' << timing_field(&Timing::median_ms) << ','
        << timing_field(&Timing::min_ms) << ',' << timing_field(&Timing::max_ms) << ','
        << csv_number(d.tflops) << ',' << csv_number(d.cublas_tflops) << ',' << csv_number(d.ratio)
        << ',' << (r.error ? csv_number(r.error->rel_fro) : std::string()) << ','
        << (r.error ? csv_number(r.error->max_abs) : std::string()) << ',' << csv_field(r.status)
        << ',' << csv_field(info.device.name) << ','
        << (r.sm_clock_mhz ? std::to_string(*r.sm_clock_mhz) : std::string()) << ',' << info.seed
        << ',' << csv_field(info.command) << ',' << csv_number(p.alpha) << ',' << csv_number(p.beta)
        << ',' << r.l2_sets << ','
        << (r.timing ? std::to_string(r.timing->launches_per_sample) : std::string()) << ','
        << (r.exact_mismatches ? std::to_string(*r.exact_mismatches) : std::string()) << '\n';
  }
}

void write_json(std::ostream& out, const RunInfo& info, const std::vector<Result>& results) {
  const DeviceInfo& dev = info.device;
  Json device = {
      {"index", dev.device},
      {"name", dev.name},
      {"compute_capability", dev.compute_capability},
      {"sm_count", dev.sm_count},
      {"l2_bytes", dev.l2_bytes},
      {"memory_bytes", dev.memory_bytes},
      {"pci_bus_id", dev.pci_bus_id},
      {"driver_version", dev.driver_version},
      {"runtime_version", dev.runtime_version},
      {"nvcc_version", dev.nvcc_version},
      {"cublas_version", dev.cublas_version},
      {"clocks_start", json_clocks(info.clocks_start)},
      {"clocks_end", info.clocks_end ? json_clocks(*info.clocks_end) : Json(nullptr)},
  };
  Json rows = Json::array();
  for (const Result& r : results) {
    const Problem& p = r.problem;
    const Derived d = derive(r);
    const auto timing = [&r](auto field) {
      return r.timing ? Json((*r.timing).*field) : Json(nullptr);
    };
    const auto error = [&r](auto field) {
      return r.error ? Json((*r.error).*field) : Json(nullptr);
    };
    rows.push_back({
        {"M", p.m},
        {"N", p.n},
        {"K", p.k},
        {"batch", p.batch},
        {"dtype", to_string(p.input)},
        {"out_dtype", to_string(p.output)},
        {"layout", layouts_name(p.layouts)},
        {"lda", p.lda},
        {"ldb", p.ldb},
        {"ldc", p.ldc},
        {"stride_a", nullable(batch_stride(p, p.stride_a))},
        {"stride_b", nullable(batch_stride(p, p.stride_b))},
        {"stride_c", nullable(batch_stride(p, p.stride_c))},
        {"offset", p.offset},
        {"alpha", p.alpha},
        {"beta", p.beta},
        {"kernel", r.kernel},
        {"config", r.config.empty() ? Json(nullptr) : Json(r.config)},
        {"median_ms", timing(&Timing::median_ms)},
        {"min_ms", timing(&Timing::min_ms)},
        {"max_ms", timing(&Timing::max_ms)},
        {"launches_per_sample", timing(&Timing::launches_per_sample)},
        {"tflops", nullable(d.tflops)},
        {"cublas_tflops", nullable(d.cublas_tflops)},
        {"ratio", nullable(d.ratio)},
        {"rel_err", error(&testing::ErrorStats::rel_fro)},
        {"max_abs_err", error(&testing::ErrorStats::max_abs)},
        {"max_abs_row", error(&testing::ErrorStats::max_row)},
        {"max_abs_col", error(&testing::ErrorStats::max_col)},
        {"max_abs_entry", error(&BatchErrorStats::max_abs_entry)},
        {"rel_err_entry", error(&BatchErrorStats::rel_fro_entry)},
        {"nonfinite", error(&testing::ErrorStats::nonfinite)},
        {"exact_mismatches", nullable(r.exact_mismatches)},
        {"status", r.status},
        {"sm_clock_mhz", nullable(r.sm_clock_mhz)},
        {"l2_sets", r.l2_sets},
    });
  }
  const Json doc = {
      {"device", std::move(device)},
      {"source", TCGEMM_GIT_DESCRIBE},
      {"command", info.command},
      {"timing", info.timing},
      {"seed", info.seed},
      {"results", std::move(rows)},
  };
  // The command line can hold bytes that are not UTF-8 (a file name, say):
  // write U+FFFD for them rather than throw.
  out << doc.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

}  // namespace tcgemm::bench
