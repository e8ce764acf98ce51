// simprec gemm: D = A*B as a GEMM kernel computes it (lib/gemm: split-K, promotion, scales, bias,
// output cast around the tensor-core instructions), on .npy operands; `simprec gemm --list`
// prints the presets and keys of a GEMM numerics spec.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "lib/cli/command.hpp"
#include "lib/cli/output_option.hpp"
#include "lib/cli/threads_option.hpp"
#include "lib/gemm/gemm_arrays.hpp"
#include "lib/gemm/gemm_numerics.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::cli {
namespace {

struct Options {
  std::string numerics, a, b, scale_a, scale_b, bias, block_scale_a, block_scale_b, out;
  bool list = false;
  unsigned threads = 0;
};

std::optional<NpyArray> read_optional(const std::string& path) {
  if (path.empty()) return std::nullopt;
  return read_npy(path);
}

void run_gemm_command(const Options& o) {
  if (o.list) {
    std::printf("%s", gemm::gemm_reference_markdown().c_str());
    return;
  }
  if (o.numerics.empty() || o.a.empty() || o.b.empty() || o.out.empty()) {
    throw UsageError("gemm needs --numerics, --a, --b and --out (or --list)");
  }
  gemm::GemmNumerics numerics;
  try {
    numerics = gemm::parse_gemm_numerics(o.numerics);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const NpyArray a = read_npy(o.a), b = read_npy(o.b);
  const gemm::GemmArrayScales scales{read_optional(o.scale_a), read_optional(o.scale_b),
                                     read_optional(o.bias), read_optional(o.block_scale_a),
                                     read_optional(o.block_scale_b)};
  NpyArray d;
  try {
    d = gemm::gemm_arrays(numerics, a, b, scales, o.threads);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  write_npy(o.out, d);
  std::printf("%s: D (%lld, %lld) float32 (%s values) written to %s\n",
              gemm::canonical_gemm_numerics(numerics).c_str(), static_cast<long long>(d.shape[0]),
              static_cast<long long>(d.shape[1]), numerics.out.name().c_str(), o.out.c_str());
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto options = std::make_shared<Options>();
  auto* command = app.add_subcommand(
      "gemm",
      "D = A*B as a GEMM kernel computes it around the tensor-core instructions: split-K, "
      "promotion, scales, bias, output cast (GEMM numerics: PRESET[,KEY=VALUE...]). See "
      "docs/gemm.md.");
  command->add_flag("--list", options->list, "print the GEMM presets and keys (Markdown)");
  command->add_option("--numerics", options->numerics,
                      "GEMM numerics spec, e.g. scaled-mm-e4m3 or cublas-bf16,out=fp32");
  command->add_option("--a", options->a,
                      "A.npy (M, K): uint8/uint16 encodings of the instruction's A format or "
                      "float32 values it holds");
  command->add_option("--b", options->b, "B.npy (K, N): the same for B's format");
  command->add_option("--scale-a", options->scale_a,
                      "scale_a.npy, float32: 1 value (tensor) or M (row)");
  command->add_option("--scale-b", options->scale_b,
                      "scale_b.npy, float32: 1 value (tensor) or N (row)");
  command->add_option("--block-scale-a", options->block_scale_a,
                      "block_scales: A's scales (M, ceil(K / block)), uint8 encodings (E8M0 for "
                      "mxfp8, e4m3 for nvfp4) or float32 values");
  command->add_option("--block-scale-b", options->block_scale_b,
                      "block_scales: B's scales (ceil(K / block), N)");
  command->add_option("--bias", options->bias,
                      "bias.npy, float32: N values, added in fp32 before the output cast");
  command->add_option("--out", options->out, "D.npy: float32 (M, N), values of the output format")
      ->check(output_path());
  add_threads_option(*command, options->threads, "--threads", "threads (0: all)");
  command->callback([options] { run_gemm_command(*options); });
});

}  // namespace
}  // namespace simprec::cli
