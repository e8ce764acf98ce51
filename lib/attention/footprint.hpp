// What an attention run costs before it runs: an estimate of the memory the emulation, the fp64
// reference and the comparison need (docs/attention.md, "Memory bound"). The shape's own checks
// are tensors.hpp's check_shape.
#pragma once

#include <cstdint>
#include <string>

#include "lib/attention/config.hpp"
#include "lib/attention/tensors.hpp"
#include "lib/limits/memory_bound.hpp"

namespace simprec::attention {

// What a command keeps alive at once around run_attention.
struct FootprintUse {
  bool backward = false;           // dO given: gradients computed
  int output_sets = 2;             // the emulation's outputs, the reference's, a baseline's ...
  unsigned threads = 0;            // 0: hardware concurrency
  bool standard_baseline = false;  // a standard-attention run follows the flash one
};

// An estimate of the peak memory of run_attention and reference_attention on `shape` with
// `config`'s tiles, plus the inputs (given, rounded for the reference, rounded inside the run)
// and `use.output_sets` sets of outputs. Measured peaks (max RSS of `simprec attention`, 2
// threads, forward and backward, N from 256 to 4096) lie between 0.5 and 1 times it.
limits::MemoryEstimate estimate_memory(const AttentionShape& shape, const AttentionConfig& config,
                                       const FootprintUse& use);

// "B=1 H=2 Nq=64 Nk=64 d=16 dv=16", as refusals name a shape.
std::string shape_text(const AttentionShape& shape);

struct AnalysisOptions;
// The estimate of analyse_attention on inputs of `shape` (with dO when `backward`): the
// emulation's outputs, and with the reference its outputs, a flash configuration's
// standard-attention baseline and the attribution's, on config.threads threads. The one
// estimate that `simprec attention` and Python's attention() both check.
limits::MemoryEstimate estimate_analysis_memory(const AttentionShape& shape,
                                                const AttentionConfig& config,
                                                const AnalysisOptions& options, bool backward);

}  // namespace simprec::attention
