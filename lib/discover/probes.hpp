// Probe inputs for a kernel that can be called: small ones first, each kind made to expose one
// kind of choice: ties (repeated-max), a row max that grows in later key blocks (rising-max:
// the rescale, the key blocks' width and order), one met first and never exceeded (falling-max:
// a kernel that walks the keys backwards sees it grow), large exponent arguments (peaky: the
// argument's roundings and the device's exp), lengths at and past tile boundaries, causal masks
// and other head dimensions (the dispatch, the scale's rounding).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emulation/format.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::discover {

struct ProbeDesign {
  std::string kind;  // a generator of lib/inputs, rising-max or falling-max
  int64_t batch = 1, heads = 2, nq = 64, nk = 64, d = 64;
  bool causal = false;
  uint64_t seed = 1;
  std::string label() const;  // "rising-max 1x2x64x200 d=64 causal"
  double cost() const;
};

// What the kernel accepts: a length or head dimension fitted to its constraints (the nearest
// accepted value at or above it, else the largest; -1 where none is), and whether it takes a
// causal mask.
struct ProbeLimits {
  std::function<int64_t(const std::string& symbol, int64_t wanted)> fit;
  bool causal = false;
};

// The first probes every search starts from, then the rest, cheapest first, from which the
// search picks those that tell its best spec from the ones it cannot yet tell it from.
std::vector<ProbeDesign> first_probes(const ProbeLimits& limits);
std::vector<ProbeDesign> probe_catalogue(const ProbeLimits& limits);

// The probe's Q, K, V as values of the input format (rounded to nearest even).
attention::AttentionInputs probe_inputs(const ProbeDesign& probe, const Format& input_format);

}  // namespace simprec::discover
