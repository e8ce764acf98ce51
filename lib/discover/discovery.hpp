// `simprec discover` and simprec.discover: find a numerics spec that reproduces a kernel bit for
// bit, from recorded cases, from a kernel it calls on probes of its own, or both. The report's
// lines (docs/discover.md) go to `log` as they come and end with `spec SPEC`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/discover/agreement.hpp"
#include "lib/discover/evidence.hpp"
#include "lib/discover/kernel.hpp"

namespace simprec::discover {

struct DiscoverOptions {
  // The specs the search may start from (presets or numerics files): each is climbed, the one
  // that agrees best first, until one reaches a bit-exact spec. Empty: kDefaultFamilies.
  std::vector<std::string> families;
  std::optional<double> time_limit;  // seconds; past it the best spec so far is reported
  unsigned threads = 0;              // candidates tried at once (0: every core)
  size_t max_probes = 32;            // kernel calls beyond the first probes, at most
  std::function<void(const std::string& line)> log;
};

inline constexpr const char* kDefaultFamilies[] = {"fa2", "fp32", "torch-math"};

// A row where the spec found still differs, and the single moves that would make it agree.
struct RemainingRow {
  size_t case_index = 0;
  std::string output;
  RowDiff diff;
  std::vector<std::string> agrees_with;  // moves, closest first
};

struct DiscoveryResult {
  std::string spec;                      // canonical; the cases' given items are added per case
  bool bit_exact = false;                // on every value of every case
  bool stopped = false;                  // the time limit ended the search
  std::vector<Case> cases;               // the evidence searched, probes the kernel ran included
  std::vector<CaseAgreement> agreement;  // the spec's, per case
  std::vector<RemainingRow> remaining;   // every differing row
  std::vector<std::string> ties;  // moves that agree as well on every case and every probe tried
  double seconds = 0;
  int64_t runs = 0;                // emulations
  std::vector<std::string> lines;  // the report
};

// Throws std::invalid_argument for evidence that does not fit (check_case), an unknown family,
// or no case at all (no recording and no kernel).
DiscoveryResult discover(std::vector<Case> cases, CallableKernel* kernel,
                         const DiscoverOptions& options);

}  // namespace simprec::discover
