// simprec mma: D = A*B + C the way a tensor-core instruction chain computes it (emulation/
// tensor_core.hpp), on .npy operands; `simprec mma --list` lists the models.
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/cli/command.hpp"
#include "lib/cli/output_option.hpp"
#include "lib/cli/threads_option.hpp"
#include "lib/mma/batched_mma.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::cli {
namespace {

struct Options {
  std::string model, a, b, c, out, max_memory;
  bool list = false;
  unsigned threads = 0;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string alignment_text(const TensorCoreModel& m) {
  return m.alignment == AlignmentExponent::kOperandSum ? "e(a)+e(b)" : "exact product exponent";
}

void list_models() {
  std::printf("%-28s %-9s %-15s %-11s %-6s %-9s %-6s %-5s %-10s %-8s %s\n", "model", "verified",
              "gpu", "input", "accum", "m,n,k", "block", "kept", "grouping", "rounding",
              "instruction");
  for (const TensorCoreModel& m : tensor_core_models()) {
    const std::string shape =
        std::to_string(m.m) + "," + std::to_string(m.n) + "," + std::to_string(m.k);
    std::string rounding = std::string(short_name(m.block_rounding));
    if (m.block_result_precision < m.accumulator.precision())
      rounding += "/p" + std::to_string(m.block_result_precision);
    if (m.c_entry == CEntry::kSeparateAddition) rounding += "+C(rne)";
    std::printf("%-28s %-9s %-15s %-11s %-6s %-9s %-6d %-5d %-10s %-8s %s\n", m.name.c_str(),
                m.verified ? "yes(H100)" : "no", m.gpu.c_str(), m.input_name().c_str(),
                m.accumulator.name().c_str(), shape.c_str(), m.block_size, m.kept_fraction_bits,
                m.grouping == KGrouping::kContiguous ? "contiguous" : "pairs", rounding.c_str(),
                m.instruction.c_str());
  }
  std::printf(
      "\ninput: A's and B's format (A.B where they differ); block: products aligned together; "
      "kept: fraction bits kept below the alignment exponent "
      "(%s); rounding: of each block's sum.\n",
      alignment_text(tensor_core_models().front()).c_str());
}

void run_mma(const Options& o) {
  if (o.list) {
    list_models();
    return;
  }
  if (o.model.empty() || o.a.empty() || o.b.empty() || o.out.empty()) {
    throw UsageError("mma needs --model, --a, --b and --out (or --list)");
  }
  const TensorCoreModel* model;
  try {
    model = &tensor_core_model(o.model);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const NpyArray a = read_npy(o.a), b = read_npy(o.b);
  std::optional<NpyArray> c;
  if (!o.c.empty()) c = read_npy(o.c);
  NpyArray d;
  try {
    d = batched_mma(*model, a, b, c ? &*c : nullptr, o.threads, limits::memory_limit(o.max_memory));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  write_npy(o.out, d);
  const std::vector<int64_t>& d_shape = d.shape;
  std::printf("%s: D %s (%s) written to %s\n", model->name.c_str(), shape_text(d_shape).c_str(),
              model->accumulator == formats::fp32 ? "float32" : "fp16 bit patterns, uint16",
              o.out.c_str());
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto options = std::make_shared<Options>();
  auto* command =
      app.add_subcommand("mma", "D = A*B + C the way a tensor-core instruction chain computes it.");
  command->add_flag("--list", options->list,
                    "list the models and whether each is verified on hardware");
  command->add_option("--model", options->model, "model name (see --list), e.g. tc:sm90-mma-bf16");
  command->add_option("--a", options->a,
                      "A.npy, shape (..., M, K): uint16/uint8 bit patterns or float32 values");
  command->add_option("--b", options->b, "B.npy, shape (..., K, N)");
  command->add_option("--c", options->c,
                      "C.npy, shape (..., M, N): float32 (fp16 accumulators: uint16 bits or "
                      "float32); default zeros");
  command
      ->add_option("--out", options->out,
                   "D.npy: float32, or uint16 fp16 bit patterns for fp16 accumulators")
      ->check(output_path());
  add_threads_option(*command, options->threads, "--threads", "threads (0: all)");
  command->add_option("--max-memory", options->max_memory,
                      "refuse work whose estimated memory exceeds SIZE (e.g. 4G; default: the "
                      "machine's physical memory)");
  command->callback([options] { run_mma(*options); });
});

}  // namespace
}  // namespace simprec::cli
