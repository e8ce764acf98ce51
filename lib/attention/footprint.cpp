#include "lib/attention/footprint.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "emulation/parallel.hpp"
#include "lib/attention/analysis.hpp"
#include "lib/attention/dispatch.hpp"
#include "lib/limits/checked_arithmetic.hpp"

namespace simprec::attention {

limits::MemoryEstimate estimate_memory(const AttentionShape& s, const AttentionConfig& config,
                                       const FootprintUse& use) {
  check_shape(s);
  constexpr uint64_t kDouble = sizeof(double), kFloat = sizeof(float);
  const int64_t problems = s.batch * s.heads;
  const int64_t input_per_problem =
      s.nq * s.d + s.nk * s.d + s.nk * s.dv + (use.backward ? s.nq * s.dv : 0);
  const int64_t output_per_problem =
      s.nq * s.dv + s.nq + (use.backward ? s.nq * s.d + s.nk * s.d + s.nk * s.dv + s.nq : 0);
  limits::MemoryEstimate total;
  // The program, its libraries and small buffers (simprec's resident size on a tiny problem is
  // about 20 MiB).
  total.add(1, uint64_t{32} << 20);
  // Inputs as given, rounded for the reference and rounded inside run_attention.
  total.add(problems, 3 * kDouble * uint64_t(input_per_problem));
  limits::MemoryEstimate outputs;
  outputs.add(problems, kDouble * uint64_t(output_per_problem)).times(uint64_t(use.output_sets));
  total.add(outputs);

  // Per problem in flight: the reference holds Nq x Nk scores (and, backward, dS and two
  // transposes); standard attention rows of Nk scores per tile row (backward: two Nq x Nk
  // matrices); a flash tile several Br x Bc blocks; every engine float and transposed copies.
  const AttentionConfig tiled = resolve_for_shape(config, s);
  const int64_t br = tiled.block_rows, bc = tiled.block_cols;
  limits::MemoryEstimate reference;
  reference.add(s.nq, kDouble * uint64_t(s.nk)).times(use.backward ? 4 : 1);
  reference.add(s.nk, kDouble * uint64_t(std::max(s.d, s.dv)));
  limits::MemoryEstimate engine;
  engine.add(s.nq + s.nk, (kDouble + 2 * kFloat) * uint64_t(s.d + s.dv));
  // The float fast path packs a tensor-core model's operands once per problem (K and V for the
  // forward pass; Q^T, dO, dO^T and Q for the backward), under 32 bytes per element of them.
  const bool tensor_core = std::any_of(config.sites.begin(), config.sites.end(), [](const auto& x) {
    return x.accumulation.starts_with("tc:");
  });
  if (tensor_core) engine.add(s.nq + s.nk, 32 * uint64_t(s.d + s.dv));
  limits::MemoryEstimate tiles;
  tiles.add(br, kDouble * 6 * uint64_t(bc)).add(br, kDouble * 2 * uint64_t(std::max(s.d, s.dv)));
  limits::MemoryEstimate standard;
  standard.add(br, kDouble * 2 * uint64_t(s.nk));
  if (use.backward) standard.add(s.nq, kDouble * 4 * uint64_t(s.nk));
  limits::MemoryEstimate emulation = engine;
  if (config.flash()) emulation.add(tiles);
  if (!config.flash() || use.standard_baseline) emulation.add(standard);
  limits::MemoryEstimate per_problem =
      reference.bytes() > emulation.bytes() ? reference : emulation;
  const int64_t workers = std::min<int64_t>(problems, resolve_threads(use.threads));
  total.add(per_problem.times(uint64_t(workers)));
  return total;
}

std::string shape_text(const AttentionShape& s) {
  return "B=" + std::to_string(s.batch) + " H=" + std::to_string(s.heads) +
         " Nq=" + std::to_string(s.nq) + " Nk=" + std::to_string(s.nk) +
         " d=" + std::to_string(s.d) + " dv=" + std::to_string(s.dv);
}

limits::MemoryEstimate estimate_analysis_memory(const AttentionShape& shape,
                                                const AttentionConfig& config,
                                                const AnalysisOptions& options, bool backward) {
  const bool baseline =
      options.reference && options.baseline && config.flash();
  FootprintUse use;
  use.backward = backward;
  use.output_sets =
      1 + (options.reference ? 1 : 0) + (baseline ? 1 : 0) + (options.attribute ? 1 : 0);
  use.threads = config.threads;
  use.standard_baseline = baseline;
  return estimate_memory(shape, config, use);
}

}  // namespace simprec::attention
