// How far one numerics spec is from a kernel on one case: the spec run on the case's inputs, each
// output compared bit for bit with the kernel's, the rows that differ kept by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/discover/evidence.hpp"

namespace simprec::discover {

// A row of an output where the spec and the kernel differ. problem = b * H + h; row: the query
// (or key) row in the whole tensor.
struct RowDiff {
  int64_t problem = 0, row = 0;
  int64_t columns = 0;   // how many of the row's values differ
  int64_t max_ulps = 0;  // the largest distance among them (NaN against a number: INT64_MAX)
  bool operator==(const RowDiff&) const = default;
};

struct OutputAgreement {
  std::string name;
  int64_t values = 0, equal = 0;  // NaN in both counts as equal
  double distance = 0;            // sum of log2(1 + |ulps|) over the values that differ
  std::vector<RowDiff> rows;      // in order
  bool exact() const { return equal == values; }
};

struct CaseAgreement {
  std::vector<OutputAgreement> outputs;  // in the case's order
  uint64_t fingerprint = 0;              // of every compared value the spec gave
  bool exact() const;
};

// The configuration a spec runs a case with: the spec at the case's input format, the case's
// given items that the spec accepts and does not set itself, its mask and scale, one thread.
// Throws std::invalid_argument when the spec is refused.
attention::AttentionConfig case_config(const std::string& spec, const Case& c);

// Throws std::invalid_argument when a run of the case would refuse the spec (its requirements
// checked once the tiles are made concrete for the case's shape); runs nothing.
void check_runnable(const std::string& spec, const Case& c);

// Runs the spec on the case and compares (a case whose outputs the kernel has not filled yet, all
// zeros, still gives the fingerprint that tells two specs apart on it). Throws
// std::invalid_argument (refused) and whatever the emulation throws (Cancelled past a deadline).
CaseAgreement evaluate_case(const std::string& spec, const Case& c);

}  // namespace simprec::discover
