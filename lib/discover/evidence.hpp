// What `simprec discover` searches against: cases, each the inputs of one call of a kernel and
// what the kernel returned for them (all of an output, or the rows a recording kept).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/attention/tensors.hpp"
#include "plugins/host/host_tensor.hpp"

namespace simprec::discover {

// The outputs a case may hold, in the order reports list them. O, LSE and dQ have one row per
// query, dK and dV one per key.
inline constexpr const char* kOutputNames[] = {"O", "LSE", "dQ", "dK", "dV"};
bool is_output_name(const std::string& name);
bool is_key_output(const std::string& name);  // dK, dV
// The values per row of an output for inputs of shape `s`: 1 for the LSE, dv for O and dV, d for
// dQ and dK.
int64_t output_columns(const std::string& name, const attention::AttentionShape& s);

// One output of the kernel: `values` holds its encodings in its format, shaped [B, H, R, D]
// (LSE: [B, H, R]) where R is rows.size(), or the whole length when rows is empty.
struct Observed {
  plugins::HostTensor values;  // name: one of kOutputNames
  std::vector<int64_t> rows;   // the query (or key) rows kept, increasing; empty: all
  int64_t row_count() const;   // R
  int64_t columns() const;     // D (1 for LSE)
};

// One call of the kernel. `given` are KEY=VALUE items the call fixes and the search never moves
// (the batch x heads a one-head recording came from, the GPU's multiprocessors, the lengths a
// compiled graph was first compiled for): each candidate spec takes those it accepts.
struct Case {
  std::string label;  // what it is, for reports: "probe 3 rising-max ...", a file name
  attention::AttentionInputs inputs;  // values of input_format; d_out where gradients are given
  std::string input_format;
  bool causal = false;
  std::optional<double> scale;  // default 1/sqrt(d)
  std::vector<std::string> given;
  std::vector<Observed> outputs;

  const Observed* output(const std::string& name) const;
  bool has_gradients() const;
  // The emulation's work for one candidate, in multiply-adds (a backward pass counts 2.5 times
  // the forward's): what the search weighs when it picks cheap cases first.
  double cost() const;
};

// Throws std::invalid_argument naming the case and what does not fit: an output of the wrong
// shape for the inputs, rows out of range or not increasing, gradients without dO, no output.
void check_case(const Case& c);

}  // namespace simprec::discover
