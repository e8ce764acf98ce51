// `validate --locate`: where an attention kernel and its emulation differ, and which choice of
// the numerics would make them agree. For each output that differs, its first differing element
// (batch, head, row, column) with both values, their bits and ulp distance; for the earliest of
// those rows, the emulation's intermediate values of the row (its forward pass, row_probe.hpp);
// and, re-running the emulation of that row's problem with each other strategy of each slot, a
// few tiles and each other deterministic rounding at each site, the alternatives that make the row
// agree and how many of the problem's rows agree with each. The report's lines are documented in
// docs/plugins.md (locate_text.cpp prints them).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/config.hpp"
#include "lib/attention/row_probe.hpp"
#include "lib/attention/tensors.hpp"
#include "plugins/host/host_tensor.hpp"

namespace simprec::validate {

// The first element of an output (flat order) where the kernel and the emulation differ.
struct FirstDifference {
  std::string output;
  int64_t index = 0;  // flat
  int64_t problem = 0, b = 0, h = 0, row = 0;
  std::optional<int64_t> column;  // none for an output of one value per row (LSE)
  double kernel = 0, emulation = 0;
  uint64_t kernel_bits = 0, emulation_bits = 0;
  int width = 0;                // the storage format's bits
  std::optional<int64_t> ulps;  // kernel - emulation in the storage format; none with a NaN
  int64_t differing = 0;        // the output's elements that differ
  int64_t row_differing = 0;    // of them, those of this row
};

// One output's rows of the located problem that agree bit for bit (NaN agrees with NaN).
struct OutputRows {
  std::string output;
  int64_t agreeing = 0, rows = 0;
};

// How a candidate's outputs agree with the kernel's on the located problem: the located row, the
// rows of its kind (query rows: O, LSE, dQ; key rows: dK, dV) on which every output of that kind
// agrees, and each output's rows.
struct Agreement {
  bool row_agrees = false;
  int64_t agreeing = 0, rows = 0;
  std::vector<OutputRows> outputs;
};

// One configuration tried instead of the model's: another strategy in a slot, another value of a
// parameter (the tile), or another rounding at a site.
struct Alternative {
  enum class Kind { kSlot, kParameter, kSite };
  std::string option;  // the slot, parameter or site
  Kind kind = Kind::kSlot;
  std::string value;  // the strategy, the parameter's text, or the site's FORMAT:ROUNDING[:ACC]
  Agreement agreement;
  bool changes = true;  // some output of the located problem differs from the model's
};

struct LocateReport {
  std::vector<FirstDifference> differences;  // one per differing output, in output order
  // The located row: the earliest (problem, row) among the first differences of the outputs of
  // the first differing output's kind; absent when every output agrees.
  std::optional<FirstDifference> located;
  bool key_row = false;  // the located row is a key row (dK, dV)
  // The emulation's forward pass of the located row, where the run computes one (a forward
  // kernel's query row).
  std::optional<attention::RowProbe> probe;
  Agreement model;  // the model's own agreement on the located problem
  std::vector<Alternative> alternatives;
  int64_t refused = 0;  // alternatives whose requirements the configuration does not meet
  // Where the run was stopped (Cancelled, with stop_when_cancelled): its reason, and how many
  // alternatives were left untried. The report holds what was found before.
  std::string stopped;
  int64_t untried = 0;
};

// Runs the emulation with a configuration (the model's, or an alternative) on the kernel's
// inputs: run_attention, with the kernel's device exp2 where it has one.
using AttentionRunner = std::function<attention::AttentionOutputs(
    const attention::AttentionConfig& config, const attention::RunOptions& options)>;

// The outputs an attention kernel writes, named O, LSE, dQ, dK, dV, shaped [..., S, D] (LSE:
// [..., S]) with `shape`'s batch x heads problems leading. `kernel` and `emulated` hold the same
// outputs in the same order (as ValidationResult does). Throws std::invalid_argument for an
// output of another name or shape.
std::vector<FirstDifference> first_differences(const attention::AttentionShape& shape,
                                               const std::vector<plugins::HostTensor>& kernel,
                                               const std::vector<plugins::HostTensor>& emulated);

// The whole report. `config` is the model's configuration; `run` runs it on the kernel's inputs.
// A run stopped by Cancelled (a time limit, emulation/cancellation.hpp) ends the report there
// when stop_when_cancelled, else the Cancelled goes on to the caller (Python's Ctrl-C).
LocateReport locate_attention(const attention::AttentionShape& shape,
                              const attention::AttentionConfig& config,
                              const std::vector<plugins::HostTensor>& kernel,
                              const std::vector<plugins::HostTensor>& emulated,
                              const AttentionRunner& run, bool stop_when_cancelled = false);

// The report's lines (docs/plugins.md), each starting "locate ".
void print_locate(std::FILE* out, const LocateReport& report);

}  // namespace simprec::validate
