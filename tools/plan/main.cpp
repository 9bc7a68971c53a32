// tcgemm-plan: the tile-feasibility planner on the command line. For a device
// spec and a tile configuration it prints the registers, shared memory,
// threads and resident blocks a GEMM block needs and whether it fits; with
// --article-tables it reproduces the S4000 article's tables 1-3 beside the
// physically correct register counts. Runs on the CPU; needs no GPU.
//
// Exit status: 0 every requested configuration fits (or the article tables
// were printed); 1 a configuration does not fit; 2 a usage error; 3 the
// output could not be written.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "plan/article.h"
#include "plan/device_spec.h"
#include "plan/planner.h"
#include "table.h"

namespace {

using namespace tcgemm::plan;
using tcgemm::plan_cli::Table;

constexpr int kExitOk = 0;
constexpr int kExitDoesNotFit = 1;
constexpr int kExitUsage = 2;
constexpr int kExitOutput = 3;

constexpr const char* kFooter = R"(
The default configuration is the article's final S4000 kernel: 32x32x16 MMAs,
4x2 per warp, 2x4 warps (256x256 block tile), BATCH 4 (--bk 64), OFFSET 2
(--pad-a 2), one fp32 MMA tile of C staged per warp in a union with A and B.
Registers are the fragments' (fp32 accumulators one per register, fp16/bf16
two per register, a warp's fragment spread over its lanes, rounded to the
allocation unit): a lower bound; add --overhead-regs for addresses etc.
Exit status: 0 every configuration fits (or --article-tables / --devices);
1 a configuration does not fit; 2 a usage error; 3 the output could not be
written.
Details: docs/planner.md in the tcgemm repository.)";

std::string str(std::int64_t v) { return std::to_string(v); }

// "32x32x16" -> {32, 32, 16}; "4x2" -> {4, 2}; "8" -> {8}.
std::optional<std::vector<int>> parse_dims(const std::string& text) {
  std::vector<int> dims;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, 'x')) {
    if (part.empty() || part.size() > 6 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    dims.push_back(std::stoi(part));
  }
  if (dims.empty() || text.back() == 'x') return std::nullopt;
  return dims;
}

std::string failed_limits(const Plan& p) {
  std::string names;
  for (const LimitCheck& check : p.checks) {
    if (check.ok) continue;
    if (!names.empty()) names += ", ";
    names += check.name;
  }
  return names.empty() ? "-" : names;
}

std::string yes_no(bool b) { return b ? "TRUE" : "FALSE"; }

void print_devices(bool csv) {
  Table table({"device", "description", "warp", "regs/SM", "regs/block", "regs/thread",
               "reg unit/warp", "sub-partitions", "smem/SM", "smem/block", "smem reserved",
               "smem unit", "threads/SM", "threads/block", "blocks/SM"});
  for (const DeviceSpec& d : builtin_devices()) {
    table.add({std::string(d.name), std::string(d.description), str(d.warp_size),
               str(d.regs_per_sm), str(d.max_regs_per_block), str(d.max_regs_per_thread),
               str(d.reg_alloc_unit), str(d.reg_sub_partitions), str(d.smem_per_sm),
               str(d.smem_per_block_max), str(d.smem_reserved_per_block), str(d.smem_alloc_unit),
               str(d.max_threads_per_sm), str(d.max_threads_per_block),
               d.max_blocks_per_sm > 0 ? str(d.max_blocks_per_sm) : "n/a"});
  }
  if (csv) {
    table.print_csv(std::cout);
    return;
  }
  table.print(std::cout);
  std::cout << "\nSources and assumptions:\n";
  for (const DeviceSpec& d : builtin_devices()) {
    std::cout << "  " << d.name << ": " << d.sources << '\n';
    if (!d.unverified.empty()) std::cout << "    unverified: " << d.unverified << '\n';
  }
}

// ---- --article-tables ----------------------------------------------------------

std::string row_list(const std::vector<int>& rows) {
  std::string text;
  for (int r : rows) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

void print_article_tables(bool csv) {
  const DeviceSpec& spec = s4000();
  Table all({"table",           "row",        "MMA_M",           "MMA_N",
             "MMA_K",           "MMA/warp",   "Block/MP",        "Thread/block",
             "Warp/block",      "Reg/block",  "Local mem",       "Feasible",
             "= article",       "Reg (text)", "Block tile",      "Frag regs/thread",
             "Frag regs/block", "Smem B",     "Feasible (phys)", "Fails on"});
  std::vector<std::string> notes;
  int verdicts_changed = 0;
  for (const ArticleTable& table : article_tables()) {
    Table one({"MMA_M", "MMA_N", "MMA_K", "MMA/warp", "Block/MP", "Thread/block", "Warp/block",
               "Reg/block", "Local mem", "Feasible", "= article", "Reg (text)", "Block tile",
               "Frag regs/thread", "Frag regs/block", "Smem B", "Feasible (phys)", "Fails on"});
    int row_number = 0;
    for (const ArticleRow& row : table.published) {
      ++row_number;
      const ArticleInputs in = article_inputs(table, row);
      const ArticleFigures f = article_figures(spec, in);
      const Plan p = plan(spec, article_tile_config(spec, in));
      if (p.fits != f.feasible) ++verdicts_changed;
      std::string same = "yes";
      if (!matches(f, row)) {
        same = "NO: printed " + str(row.reg_per_block) + " / " + str(row.local_mem) + " / " +
               yes_no(row.feasible);
      }
      std::vector<std::string> cells = {str(row.mma_m),
                                        str(row.mma_n),
                                        str(row.mma_k),
                                        str(f.mma_per_warp),
                                        str(row.blocks_per_mp),
                                        str(f.threads_per_block),
                                        str(f.warps_per_block),
                                        str(f.reg_per_block),
                                        str(f.local_mem),
                                        yes_no(f.feasible),
                                        same,
                                        str(f.reg_text),
                                        str(f.bm) + "x" + str(f.bn),
                                        str(p.fragment_regs),
                                        str(p.regs_per_block),
                                        str(p.smem_block),
                                        yes_no(p.fits),
                                        failed_limits(p)};
      one.add(cells);
      cells.insert(cells.begin(), {str(table.number), str(row_number)});
      all.add(cells);
    }
    if (!csv) {
      std::cout << "Table " << table.number << ": " << table.caption << " (warp tile "
                << table.warp_mmas_m << "x" << table.warp_mmas_n << " MMAs, A/B slab depth "
                << table.depth << ")\n";
      one.print(std::cout);
      std::cout << '\n';
    }

    // Which slab depths reproduce this table, and where the others fail.
    constexpr int kDepths[] = {16, 32, 64};
    std::string depth_note = "Table " + str(table.number) + " local memory: ";
    for (int depth : kDepths) {
      std::vector<int> bad;
      int r = 0;
      for (const ArticleRow& row : table.published) {
        ++r;
        ArticleInputs in = article_inputs(table, row);
        in.depth = depth;
        if (!matches(article_figures(spec, in), row)) bad.push_back(r);
      }
      depth_note += "depth " + str(depth);
      if (bad.empty()) {
        depth_note += " reproduces every row";
      } else {
        depth_note += (bad.size() == 1 ? " fails row " : " fails rows ") + row_list(bad);
      }
      depth_note += depth == kDepths[std::size(kDepths) - 1] ? "." : "; ";
    }
    notes.push_back(depth_note);
  }
  if (csv) {
    all.print_csv(std::cout);
    return;
  }
  std::cout
      << "Columns Reg/block .. Feasible are computed by the article's spreadsheet convention;\n"
         "'= article' compares them (and Thread/Warp per block) with the printed numbers.\n"
         "Reg/block = warps*MPW*M*N + MPW*(M*K + WTN*K*N): one register per element, fp16\n"
         "  included, and the A/B fragment term multiplied by MMA per warp (MPW) where the\n"
         "  text's own formula, (C + A + B per warp) x warps, multiplies it by the warps:\n"
         "  'Reg (text)'. The two agree only where warps = MMA per warp.\n"
         "Local mem = max(depth*(BM+BN), warps*M*N*2) in 2-byte units (fp16 A/B slabs in a\n"
         "  union with one fp32 MMA tile of C per warp); Feasible = blocks*Reg <= 131072 and\n"
         "  blocks*2*Local <= 73728 bytes.\n"
         "Physical columns (tcgemm::plan::plan on the S4000 spec): fp32 accumulators one per\n"
         "  register, fp16 two per register, per-thread = per-warp / 128 lanes; fragments\n"
         "  only (a lower bound), 1 A and WTN B fragments live per warp; shared memory in bytes.\n";
  for (const std::string& note : notes) std::cout << note << '\n';
  std::cout
      << "No single depth reproduces all three tables. Physical verdicts that differ from the\n"
         "article's: "
      << verdicts_changed << " (every infeasible row is already ruled out by shared memory).\n";

  // Table 3 against the article's complete code: BATCH 4 (BK 64), OFFSET 2.
  TileConfig code;
  code.mma_m = code.mma_n = 32;
  code.bk = 64;
  code.pad_a = 2;
  const Plan final_kernel = plan(spec, code);
  const ArticleTable& t3 = article_tables()[2];
  std::cout << "Table 3 says " << t3.published[0].local_mem
            << " units = " << 2 * t3.published[0].local_mem
            << " B of local memory; the article's complete code (BATCH 4, OFFSET 2) declares\n  "
            << final_kernel.smem_block << " B (A " << final_kernel.smem_a << " + B "
            << final_kernel.smem_b << ", C staging " << final_kernel.smem_c << " in the union), "
            << (final_kernel.fits ? "which still fits" : "which does not fit")
            << " one block per MP.\n";
}

// ---- a configuration ------------------------------------------------------------

struct Options {
  std::string device = "s4000";
  std::string mma = "32x32x16";
  std::string warp_mmas = "4x2";
  std::string warps = "2x4";
  std::string blocks = "1";
  TileConfig config;
  bool csv = false;
};

int plan_configs(const DeviceSpec& spec, Options& opt) {
  TileConfig& c = opt.config;
  const auto mma = parse_dims(opt.mma);
  const auto warp_mmas = parse_dims(opt.warp_mmas);
  const auto warps = parse_dims(opt.warps);
  if (!mma || mma->size() != 3) {
    std::cerr << "tcgemm-plan: --mma wants MxNxK, e.g. 16x16x16; got '" << opt.mma << "'\n";
    return kExitUsage;
  }
  if (!warp_mmas || warp_mmas->size() != 2) {
    std::cerr << "tcgemm-plan: --warp-mmas wants MxN, e.g. 4x2; got '" << opt.warp_mmas << "'\n";
    return kExitUsage;
  }
  if (!warps || warps->size() > 2) {
    std::cerr << "tcgemm-plan: --warps wants MxN or a count, e.g. 2x4 or 8; got '" << opt.warps
              << "'\n";
    return kExitUsage;
  }
  c.mma_m = (*mma)[0];
  c.mma_n = (*mma)[1];
  c.mma_k = (*mma)[2];
  c.warp_mmas_m = (*warp_mmas)[0];
  c.warp_mmas_n = (*warp_mmas)[1];
  if (warps->size() == 2) {
    c.warps_m = (*warps)[0];
    c.warps_n = (*warps)[1];
  } else if ((*warps)[0] < 1 || (*warps)[0] > (1 << 16)) {
    std::cerr << "tcgemm-plan: --warps must be a count from 1 to 65536; got " << (*warps)[0]
              << '\n';
    return kExitUsage;
  } else {
    arrange_warps(c, (*warps)[0]);
  }

  std::vector<int> blocks;
  if (!opt.blocks.empty() && opt.blocks.back() == ',') {
    std::cerr << "tcgemm-plan: --blocks-per-sm wants a comma-separated list of counts; got '"
              << opt.blocks << "'\n";
    return kExitUsage;
  }
  std::stringstream stream(opt.blocks);
  std::string part;
  while (std::getline(stream, part, ',')) {
    const auto dims = parse_dims(part);
    if (!dims || dims->size() != 1) {
      std::cerr << "tcgemm-plan: --blocks-per-sm wants a comma-separated list of counts; got '"
                << opt.blocks << "'\n";
      return kExitUsage;
    }
    blocks.push_back((*dims)[0]);
  }
  if (blocks.empty()) {
    std::cerr << "tcgemm-plan: --blocks-per-sm is empty\n";
    return kExitUsage;
  }

  std::vector<Plan> plans;
  for (int b : blocks) {
    c.blocks_per_sm = b;
    if (auto error = validate(c)) {
      std::cerr << "tcgemm-plan: " << *error << '\n';
      return kExitUsage;
    }
    plans.push_back(plan(spec, c));
  }

  Table table({"device", "MMA", "MMA/warp", "warps", "threads", "block tile", "stages", "blocks/SM",
               "frag regs/thread", "regs/thread", "max regs/thread", "regs/block", "smem/block B",
               "threads/SM", "max blocks/SM", "fits", "reason"});
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const Plan& p = plans[i];
    table.add({std::string(spec.name), opt.mma, str(c.mmas_per_warp()),
               str(c.warps_m) + "x" + str(c.warps_n) +
                   (c.extra_warps > 0 ? "+" + str(c.extra_warps) : ""),
               str(p.threads_per_block), str(p.bm) + "x" + str(p.bn) + "x" + str(p.bk),
               str(c.stages), str(blocks[i]), str(p.fragment_regs), str(p.regs_per_thread),
               str(p.max_regs_per_thread), str(p.regs_per_block), str(p.smem_block),
               str(p.threads_per_sm), str(p.max_blocks_per_sm), yes_no(p.fits),
               p.fits ? "" : p.reason});
  }

  bool all_fit = true;
  for (const Plan& p : plans) all_fit = all_fit && p.fits;
  if (opt.csv) {
    table.print_csv(std::cout);
    return all_fit ? kExitOk : kExitDoesNotFit;
  }

  std::cout << spec.description << ": " << c.mma_m << "x" << c.mma_n << "x" << c.mma_k << " MMAs, "
            << c.warp_mmas_m << "x" << c.warp_mmas_n << " per warp, " << c.warps_m << "x"
            << c.warps_n << " warps"
            << (c.extra_warps > 0 ? " + " + str(c.extra_warps) + " without accumulators" : "")
            << "\n\n";
  table.print(std::cout);

  const Plan& p = plans.front();
  std::cout << "\nRegisters per thread (fragments): accumulators " << p.acc_regs << ", A "
            << p.a_regs << ", B " << p.b_regs << ", overhead estimate " << c.overhead_regs << "; "
            << p.regs_per_warp << " per warp after rounding to " << spec.reg_alloc_unit
            << ".\nShared memory per block: A " << p.smem_a << " B + B " << p.smem_b << " B";
  if (p.smem_c > 0) {
    std::cout << (c.c_union ? " in a union with" : " +") << " C staging " << p.smem_c << " B";
  }
  if (p.smem_barriers > 0) std::cout << ", barriers " << p.smem_barriers << " B";
  std::cout << " -> " << p.smem_block << " B declared, " << p.smem_alloc << " B allocated.\n";
  if (plans.size() == 1) {
    Table limits({"limit", "need", "device", "ok", "note"});
    for (const LimitCheck& check : p.checks) {
      limits.add(
          {check.name, str(check.need), str(check.cap), check.ok ? "yes" : "NO", check.note});
    }
    std::cout << '\n';
    limits.print(std::cout);
  }
  if (!spec.unverified.empty())
    std::cout << "\nUnverified device facts: " << spec.unverified << '\n';
  return all_fit ? kExitOk : kExitDoesNotFit;
}

}  // namespace

int plan_main(int argc, char** argv) {
  CLI::App app{
      "tcgemm-plan: registers, shared memory, threads and resident blocks of a GEMM "
      "tile configuration, and whether it fits (runs on the CPU)",
      "tcgemm-plan"};
  app.footer(kFooter);

  Options opt;
  // Defaults: the article's final kernel (table 3 and its code).
  opt.config.bk = 64;
  opt.config.pad_a = 2;
  TileConfig& c = opt.config;
  bool article = false;
  bool devices = false;
  bool no_c_union = false;

  app.add_option("--device", opt.device, "Device spec: s4000, h100, h200")
      ->check(CLI::IsMember({"s4000", "h100", "h200"}))
      ->capture_default_str();
  app.add_option("--mma", opt.mma, "MMA (fragment) shape MxNxK")->capture_default_str();
  app.add_option("--warp-mmas", opt.warp_mmas, "MMAs per warp along M and N, MxN")
      ->capture_default_str();
  app.add_option("--warps", opt.warps,
                 "Warps per block with accumulators: MxN, or a count to arrange squarest")
      ->capture_default_str();
  // A TileConfig field's option: decimal only (CLI11 alone reads "010" as
  // octal 8), its range left to validate(), which names it.
  const auto integer_option = [&app](const char* name, int& field, const char* description) {
    app.add_option(name, field, description)
        ->transform(tcgemm::bench::integer_in(std::numeric_limits<int>::min(),
                                              std::numeric_limits<int>::max()))
        ->capture_default_str();
  };
  integer_option("--extra-warps", c.extra_warps, "Warps without accumulators (producers)");
  app.add_option("--blocks-per-sm", opt.blocks,
                 "Resident blocks per SM (MP) to check; a comma-separated list prints a row each")
      ->capture_default_str();
  integer_option("--stages", c.stages, "K slabs resident in shared memory");
  integer_option("--bk", c.bk, "K extent of one slab (the article's BATCH * MMA_K)");
  integer_option("--pad-a", c.pad_a, "Padding elements per A slab row (the article's OFFSET)");
  integer_option("--pad-b", c.pad_b, "Padding elements per B slab row");
  integer_option("--ab-bytes", c.ab_bytes, "A/B element bytes");
  integer_option("--acc-bytes", c.acc_bytes, "Accumulator element bytes");
  integer_option("--c-bytes", c.c_bytes, "C staging element bytes");
  integer_option("--c-stage-tiles", c.c_stage_tiles,
                 "MMA tiles of C each warp stages through shared memory (0: none)");
  integer_option("--pad-c", c.pad_c, "Padding elements per staged C column");
  app.add_flag("--no-c-union", no_c_union, "C staging does not share storage with A/B");
  integer_option("--barriers-per-stage", c.barriers_per_stage, "8-byte mbarriers per stage");
  integer_option("--smem-align", c.smem_align,
                 "Align the storage to this many bytes, allocating as many again as slack");
  integer_option("--a-frags", c.a_frags, "A fragments a warp holds at once");
  integer_option("--b-frags", c.b_frags, "B fragments a warp holds at once (-1: MMAs along N)");
  integer_option("--fragment-copies", c.fragment_copies,
                 "Copies of each A/B element across a warp (2 for nvcuda::wmma fp16)");
  integer_option("--overhead-regs", c.overhead_regs, "Per-thread register estimate on top");
  app.add_flag("--article-tables", article,
               "Print the S4000 article's tables 1-3 as computed by its convention, with the "
               "physically correct columns");
  app.add_flag("--devices", devices, "Print the built-in device specs and their sources");
  app.add_flag("--csv", opt.csv, "CSV instead of aligned tables");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  c.c_union = !no_c_union;

  // --devices and --article-tables print fixed tables: a configuration
  // option beside them would be silently ignored, so it is refused.
  if (devices || article) {
    const std::string mode = devices ? "--devices" : "--article-tables";
    if (devices && article) {
      std::cerr << "tcgemm-plan: --devices and --article-tables print different tables: pick one\n";
      return kExitUsage;
    }
    for (const CLI::Option* option : app.get_options()) {
      const std::string name = option->get_name();
      if (option->count() == 0 || name == "--csv" || name == "--devices" ||
          name == "--article-tables" || (article && name == "--device")) {
        continue;
      }
      std::cerr << "tcgemm-plan: " << mode << " takes no configuration; drop " << name << '\n';
      return kExitUsage;
    }
  }
  if (devices) {
    print_devices(opt.csv);
    return kExitOk;
  }
  if (article) {
    if (opt.device != "s4000") {
      std::cerr << "tcgemm-plan: --article-tables describes the S4000; drop --device\n";
      return kExitUsage;
    }
    print_article_tables(opt.csv);
    return kExitOk;
  }
  const DeviceSpec* spec = find_device(opt.device);
  if (spec == nullptr) return kExitUsage;  // IsMember already refused it
  return plan_configs(*spec, opt);
}

int main(int argc, char** argv) {
  const int status = plan_main(argc, argv);
  // A table that could not be written (a full disk, a closed pipe) is a
  // failure, not a run that printed nothing.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "tcgemm-plan: writing standard output failed\n";
    return kExitOutput;
  }
  return status;
}
