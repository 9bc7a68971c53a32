// tcgemm-split-probe: the time of one production-family launch choice (a
// config, a K split, where the split applies and how it is reduced), with no
// dispatcher in between, so that a split can be set against the same config
// unsplit and against another config in one process:
//
//   tcgemm-split-probe [--reps N] [--l2-sets S] CHOICE...
//   CHOICE = MxNxK:CONFIG:SPLITS[:tail][:separate][:flipped]
//     CONFIG    a config index of src/kernels/prod/config.h (0 = prod-128x256)
//     tail      split only the last, partial wave's tiles (Choice::split_tail)
//     separate  reduce in a second kernel (Choice::separate_reduction)
//     flipped   the orientation C's layout does not give (Choice::flipped)
//   e.g. tcgemm-split-probe 2048x2048x2048:2:1 2048x2048x2048:2:2
//
// Each problem is bf16 TN (A row-major, B and C column-major, tight leading
// dimensions) on zero-filled operands, with a zeroed workspace the choice's
// size: the choice prepared once (kernels::prod::prepare), 3 launches to warm
// up, then --reps launches captured in a CUDA graph and timed between two
// CUDA events (GPU time, no host work between launches); prints
// milliseconds per launch. With --l2-sets S the launches take turns over S
// sets of A, B and C (launch i on set i mod S), so that with S sets larger
// than L2 every launch reads its operands from DRAM, as tcgemm-bench's and
// tcgemm-tune's rotating sets do; S = 1 (the default) re-reads one set,
// L2-resident where it fits. Results are not checked (the
// GPU suite's ProdChoices tests verify every choice): a diagnostic for
// profiling, e.g. under `ncu --kernel-name kernel --launch-skip 3
// --launch-count 1`. docs/production-log.md has what the H200 measured.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/prod/launch.h"
#include "tcgemm/tcgemm.h"

namespace {

struct Probe {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  tcgemm::prod::Choice choice;
};

// Parses MxNxK:CONFIG:SPLITS[:tail][:separate][:flipped]; false on anything else.
bool parse(const std::string& text, Probe* out) {
  std::istringstream in(text);
  std::string shape, field;
  if (!std::getline(in, shape, ':')) return false;
  char x1 = 0, x2 = 0;
  std::istringstream dims(shape);
  if (!(dims >> out->m >> x1 >> out->n >> x2 >> out->k) || x1 != 'x' || x2 != 'x' || !dims.eof() ||
      out->m < 1 || out->n < 1 || out->k < 1) {
    return false;
  }
  std::vector<std::string> fields;
  while (std::getline(in, field, ':')) fields.push_back(field);
  if (fields.size() < 2) return false;
  try {
    out->choice.config = std::stoi(fields[0]);
    out->choice.k_splits = std::stoi(fields[1]);
  } catch (const std::exception&) {
    return false;
  }
  if (out->choice.config < 0 || out->choice.config >= tcgemm::prod::kConfigCount ||
      out->choice.k_splits < 1) {
    return false;
  }
  for (std::size_t i = 2; i < fields.size(); ++i) {
    if (fields[i] == "tail") {
      out->choice.split_tail = true;
    } else if (fields[i] == "separate") {
      out->choice.separate_reduction = true;
    } else if (fields[i] == "flipped") {
      out->choice.flipped = true;
    } else {
      return false;
    }
  }
  return true;
}

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "tcgemm-split-probe: %s: %s\n", what, cudaGetErrorString(err));
  return false;
}

// Times one probe; false on a CUDA error or a refused launch.
bool run(const Probe& probe, int reps, int sets) {
  const std::size_t a_bytes = static_cast<std::size_t>(probe.m * probe.k) * 2;
  const std::size_t b_bytes = static_cast<std::size_t>(probe.n * probe.k) * 2;
  const std::size_t c_bytes = static_cast<std::size_t>(probe.m * probe.n) * 2;
  // Set s's A, B and C: operand[s][0..2].
  std::vector<std::array<void*, 3>> operand(static_cast<std::size_t>(sets),
                                            {nullptr, nullptr, nullptr});
  void* workspace = nullptr;
  bool ok = true;
  for (auto& set : operand) {
    ok = ok && check(cudaMalloc(&set[0], a_bytes), "cudaMalloc") &&
         check(cudaMalloc(&set[1], b_bytes), "cudaMalloc") &&
         check(cudaMalloc(&set[2], c_bytes), "cudaMalloc") &&
         check(cudaMemset(set[0], 0, a_bytes), "cudaMemset") &&
         check(cudaMemset(set[1], 0, b_bytes), "cudaMemset");
  }
  void* const a = operand[0][0];
  void* const b = operand[0][1];
  void* const c = operand[0][2];
  tcgemm::GemmArgs args;
  args.m = probe.m;
  args.n = probe.n;
  args.k = probe.k;
  args.a = {a, tcgemm::DType::kBF16, tcgemm::Layout::kRowMajor, probe.k, 0};
  args.b = {b, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, probe.k, 0};
  args.c = {c, tcgemm::DType::kBF16, tcgemm::Layout::kColMajor, probe.m, 0};
  const std::size_t workspace_bytes = tcgemm::kernels::prod::workspace_choice(args, probe.choice);
  if (ok && workspace_bytes > 0) {
    ok = check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc") &&
         check(cudaMemset(workspace, 0, workspace_bytes), "cudaMemset");
  }
  args.workspace = workspace;
  args.workspace_bytes = workspace_bytes;
  // Prepared once, then --reps enqueues captured in one CUDA graph: the time
  // per launch is the GPU's, with no host work between launches (launch_choice
  // per launch would measure the host's prepare at small sizes).
  tcgemm::kernels::prod::PreparedLaunch prepared;
  if (ok) {
    const tcgemm::Status status = tcgemm::kernels::prod::prepare(args, probe.choice, &prepared);
    if (!status.ok()) {
      std::fprintf(stderr, "tcgemm-split-probe: %s\n", status.message.c_str());
      ok = false;
    }
  }
  // The workspace the launch was prepared for (launch_choice would allocate
  // one itself; enqueue takes it as given).
  if (ok && prepared.scratch_bytes > 0 &&
      workspace_bytes < tcgemm::prod::kReservedWorkspaceBytes + prepared.scratch_bytes) {
    std::fprintf(stderr, "tcgemm-split-probe: the prepared launch needs more workspace\n");
    ok = false;
  }
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ok = ok && check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate") &&
       check(cudaEventCreate(&start), "cudaEventCreate") &&
       check(cudaEventCreate(&stop), "cudaEventCreate");
  int launches = 0;
  const auto enqueue = [&] {
    const auto& set = operand[static_cast<std::size_t>(launches++ % sets)];
    const tcgemm::Status status = tcgemm::kernels::prod::enqueue(
        prepared, tcgemm::kernels::prod::RunOperands{set[0], set[1], set[2], 1.0f, 0.0f}, workspace,
        stream);
    if (!status.ok()) std::fprintf(stderr, "tcgemm-split-probe: %s\n", status.message.c_str());
    return status.ok();
  };
  for (int i = 0; ok && i < 3; ++i) ok = enqueue();
  launches = 0;
  const bool capturing =
      ok && check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
  ok = capturing;
  for (int i = 0; ok && i < reps; ++i) ok = enqueue();
  if (capturing) {
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    ok = ok && check(end, "cudaStreamEndCapture");
  }
  ok = ok && check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate") &&
       check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch") &&
       check(cudaEventRecord(start, stream), "cudaEventRecord") &&
       check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  float ms = 0.0f;
  ok = ok && check(cudaEventRecord(stop, stream), "cudaEventRecord") &&
       check(cudaEventSynchronize(stop), "cudaEventSynchronize") &&
       check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  if (ok) {
    std::printf(
        "%lldx%lldx%lld %s k_splits=%d%s%s%s: %.4f ms per launch (workspace %zu bytes, %d "
        "operand set%s)\n",
        static_cast<long long>(probe.m), static_cast<long long>(probe.n),
        static_cast<long long>(probe.k),
        std::string(tcgemm::prod::kConfigs[probe.choice.config].name).c_str(),
        probe.choice.k_splits, probe.choice.split_tail ? " tail" : "",
        probe.choice.separate_reduction ? " separate" : "", probe.choice.flipped ? " flipped" : "",
        ms / reps, workspace_bytes, sets, sets == 1 ? "" : "s");
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  if (stream != nullptr) cudaStreamDestroy(stream);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(workspace);
  for (const auto& set : operand) {
    for (void* p : set) cudaFree(p);
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tcgemm-split-probe: time production-family launch choices (see the file's header)"};
  int reps = 20;
  int sets = 1;
  std::vector<std::string> texts;
  app.add_option("--reps", reps, "timed launches per choice")->check(CLI::Range(1, 100000));
  app.add_option("--l2-sets", sets, "operand sets the launches take turns over (see the header)")
      ->check(CLI::Range(1, 64));
  app.add_option("choices", texts, "MxNxK:CONFIG:SPLITS[:tail][:separate][:flipped]")->required();
  CLI11_PARSE(app, argc, argv);
  std::vector<Probe> probes;
  for (const std::string& text : texts) {
    Probe probe;
    if (!parse(text, &probe)) {
      std::fprintf(stderr,
                   "tcgemm-split-probe: bad choice '%s' "
                   "(MxNxK:CONFIG:SPLITS[:tail][:separate][:flipped], CONFIG 0..%d)\n",
                   text.c_str(), tcgemm::prod::kConfigCount - 1);
      return 2;
    }
    probes.push_back(probe);
  }
  int failed = 0;
  for (const Probe& probe : probes) failed += run(probe, reps, sets) ? 0 : 1;
  return failed == 0 ? 0 : 1;
}
