// simprec quantize: a tensor from an .npy file into a block-scaled format (MXFP8, MXFP6, MXFP4 as
// OCP MX v1.0 defines them, or NVFP4), written as element encodings, block scales, NVFP4's
// tensor scale and the dequantized values (docs/block_scaling.md describes the files).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "emulation/excerpt.hpp"
#include "lib/cli/command.hpp"
#include "lib/cli/number_text.hpp"
#include "lib/cli/output_option.hpp"
#include "lib/npy/npy.hpp"
#include "lib/quantize/quantize_tensor.hpp"

namespace simprec::cli {
namespace {

struct Options {
  std::string scheme, in, out, rounding = "rne";
  int sr_bits = 32;
  uint64_t seed = 0;
  int64_t block_size = 0;
  bool block_size_given = false;  // otherwise the scheme's own
};

Rounding parse_rounding(const Options& o) {
  Rounding r;
  try {
    r.mode = parse_rounding_mode(o.rounding);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (o.sr_bits < 1 || o.sr_bits > 32) {
    throw UsageError("--sr-bits " + std::to_string(o.sr_bits) + ": expected 1..32");
  }
  r.sr_bits = o.sr_bits;
  return r;
}

// What the run did, for the summary on stdout.
void print_summary(const Options& o, const BlockScaled& q, const std::vector<double>& input,
                   const std::vector<double>& dequantized) {
  size_t nan_blocks = 0;
  for (uint8_t s : q.scales) nan_blocks += q.scale.is_nan_bits(s);
  size_t clamped = 0, compared = 0;
  double max_error = 0, sum_squares = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    if (!std::isfinite(input[i]) || std::isnan(dequantized[i])) continue;
    const uint64_t magnitude = q.elements[i] & q.element.magnitude_mask();
    clamped +=
        magnitude == q.element.max_finite_bits() && std::fabs(input[i]) > std::fabs(dequantized[i]);
    const double error = dequantized[i] - input[i];
    max_error = std::max(max_error, std::fabs(error));
    sum_squares += error * error;
    ++compared;
  }
  const size_t last = q.layout.row_length % q.layout.block_size;
  const std::string partial =
      last ? " (the last of each row holds " + std::to_string(last) + ")" : "";
  std::printf(
      "%s: %zu values, %zu blocks of %zu along the last axis%s; elements %s, scales %s, "
      "rounding %s\n",
      o.scheme.c_str(), input.size(), q.scales.size(), q.layout.block_size, partial.c_str(),
      q.element.name().c_str(), q.scale.name().c_str(), o.rounding.c_str());
  if (o.scheme == "nvfp4") {
    std::printf("tensor scale (fp32 decode scale) %s\n", shortest_text(q.tensor_scale).c_str());
  }
  std::printf("blocks with a NaN scale %zu; elements at the largest magnitude below |input| %zu\n",
              nan_blocks, clamped);
  std::printf("dequantized - input over %zu values in NaN-free blocks: max |error| %s, RMS %s\n",
              compared, shortest_text(max_error).c_str(),
              shortest_text(compared ? std::sqrt(sum_squares / compared) : 0.0).c_str());
}

void run_quantize(const Options& o) {
  if (o.scheme.empty() || o.in.empty() || o.out.empty()) {
    throw UsageError("quantize needs --scheme, --in and --out");
  }
  if (!quantize::is_scheme(o.scheme)) {
    throw UsageError("--scheme '" + excerpt(o.scheme) + "': expected one of " +
                     quantize::scheme_names());
  }
  if (o.block_size_given && (o.block_size < 1 || o.block_size > quantize::kMaxBlockSize)) {
    throw UsageError("--block-size " + std::to_string(o.block_size) + ": expected 1..2^30");
  }
  const quantize::QuantizeOptions options{o.scheme, parse_rounding(o), o.seed,
                                          o.block_size_given ? o.block_size : 0};
  const NpyArray array = read_npy(o.in);
  quantize::QuantizedTensor q;
  try {
    q = quantize::quantize_tensor(array, options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(o.in + ": " + e.what());
  }

  const limits::OutputFolder dir(o.out);
  write_npy(dir, "elements.npy", make_npy<uint8_t>(q.shape, q.blocks.elements));
  write_npy(dir, "scales.npy", make_npy<uint8_t>(q.scale_shape, q.blocks.scales));
  write_npy(dir, "dequantized.npy", make_npy<double>(q.shape, q.dequantized));
  if (q.nvfp4) {
    const float tensor_scale[1] = {static_cast<float>(q.blocks.tensor_scale)};
    write_npy(dir, "tensor_scale.npy", make_npy<float>({1}, tensor_scale));
  }
  print_summary(o, q.blocks, array.to_doubles(), q.dequantized);
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto options = std::make_shared<Options>();
  auto* command = app.add_subcommand(
      "quantize",
      "Quantize a tensor into a block-scaled format: MX (OCP Microscaling v1.0) or NVFP4. Writes "
      "elements.npy, scales.npy, dequantized.npy (and tensor_scale.npy for nvfp4) into --out.");
  command->add_option("--scheme", options->scheme, quantize::scheme_names())->required();
  command->add_option("--in", options->in, "input .npy, float32 (or float64 for the MX schemes)")
      ->required();
  command->add_option("--out", options->out, "output folder")->required()->check(output_path());
  command
      ->add_option("--rounding,-r", options->rounding,
                   "rounding of the elements: rne rna rtz rup rdn rto sr rnr")
      ->capture_default_str();
  command->add_option("--sr-bits", options->sr_bits, "random bits for stochastic rounding (1..32)")
      ->capture_default_str();
  command->add_option("--seed", options->seed, "random seed for sr and rnr (value i takes index i)")
      ->capture_default_str();
  auto* block_size = command->add_option(
      "--block-size", options->block_size,
      "values per block along the last axis (default: 32 for MX, 16 for nvfp4)");
  command->callback([options, block_size] {
    options->block_size_given = block_size->count() > 0;
    run_quantize(*options);
  });
});

}  // namespace
}  // namespace simprec::cli
