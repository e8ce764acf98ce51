#include "lib/discover/probes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "lib/attention/site.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::discover {
namespace {

// Key lengths around the tile widths kernels use (16 to 256 columns): at, one short of and one
// past each boundary, and lengths no tile divides.
constexpr std::array<int64_t, 22> kLengths = {17,  31,  32,  33,  48,  63,  64,  65,
                                              80,  96,  100, 127, 128, 129, 160, 192,
                                              255, 256, 257, 320, 384, 520};
constexpr std::array<const char*, 6> kKinds = {"rising-max", "falling-max", "repeated-max",
                                               "normal",     "peaky",       "low-rank"};
// Powers of two and not: 1/sqrt(D) is exact only for even powers, so the others tell how the
// kernel rounds its scale.
constexpr std::array<int64_t, 6> kHeadDims = {64, 128, 96, 32, 80, 12};

// Fitted to the kernel's constraints; false where a dimension has no accepted value.
bool fit(const ProbeLimits& limits, ProbeDesign& p) {
  const auto one = [&](const char* symbol, int64_t& v) {
    const int64_t fitted = limits.fit(symbol, v);
    if (fitted < 1) return false;
    v = fitted;
    return true;
  };
  if (p.causal && !limits.causal) return false;
  return one("B", p.batch) && one("H", p.heads) && one("Sq", p.nq) && one("Sk", p.nk) &&
         one("D", p.d);
}

// Adds a trend along one direction u shared by every query: the score of key j grows (rising)
// or falls (falling) by about six units of the scaled score over the keys, so that a row's max
// moves to the last (or first) key blocks, through many rescales on the way.
void add_trend(attention::AttentionInputs& in, bool rising) {
  const auto& s = in.shape;
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
  const double c = std::sqrt(3.0 / scale);  // c^2 * 2 * scale = 6
  const double u = 1.0 / std::sqrt(static_cast<double>(s.d));
  for (int64_t p = 0; p < s.problems(); ++p) {
    for (int64_t i = 0; i < s.nq; ++i) {
      for (int64_t k = 0; k < s.d; ++k)
        in.q[static_cast<size_t>((p * s.nq + i) * s.d + k)] += c * u;
    }
    for (int64_t j = 0; j < s.nk; ++j) {
      const double t = s.nk > 1 ? static_cast<double>(j) / static_cast<double>(s.nk - 1) : 0.0;
      const double w = 2.0 * c * (rising ? t : 1.0 - t);
      for (int64_t k = 0; k < s.d; ++k)
        in.k[static_cast<size_t>((p * s.nk + j) * s.d + k)] += w * u;
    }
  }
}

}  // namespace

std::string ProbeDesign::label() const {
  char text[160];
  std::snprintf(text, sizeof text, "%s B=%lld H=%lld Sq=%lld Sk=%lld D=%lld%s seed=%llu",
                kind.c_str(), static_cast<long long>(batch), static_cast<long long>(heads),
                static_cast<long long>(nq), static_cast<long long>(nk), static_cast<long long>(d),
                causal ? " causal" : "", static_cast<unsigned long long>(seed));
  return text;
}

double ProbeDesign::cost() const {
  return static_cast<double>(batch * heads) * static_cast<double>(nq) * static_cast<double>(nk) *
         static_cast<double>(2 * d) * (causal ? 0.5 : 1.0);
}

std::vector<ProbeDesign> first_probes(const ProbeLimits& limits) {
  const std::vector<ProbeDesign> wanted = {
      {"normal", 1, 2, 64, 100, 64, false, 1},       {"rising-max", 1, 2, 64, 200, 64, false, 2},
      {"repeated-max", 1, 2, 64, 130, 64, false, 3}, {"falling-max", 1, 2, 32, 257, 64, false, 4},
      {"normal", 1, 1, 150, 150, 64, true, 5},       {"normal", 1, 2, 48, 80, 12, false, 6},
  };
  std::vector<ProbeDesign> out;
  for (ProbeDesign p : wanted) {
    if (fit(limits, p)) out.push_back(p);
  }
  return out;
}

std::vector<ProbeDesign> probe_catalogue(const ProbeLimits& limits) {
  std::vector<ProbeDesign> out;
  uint64_t seed = 100;
  size_t n = 0;
  for (int64_t nk : kLengths) {
    for (const char* kind : kKinds) {
      ++n;
      ProbeDesign p{kind, 1, 2, std::min<int64_t>(nk, 64), nk, 64, false, seed++};
      if (n % 3 == 0) p.nq = nk;
      if (n % 4 == 0) {
        p.causal = true;
        p.nq = nk;
        p.heads = 1;
      }
      if (n % 5 == 0) p.d = kHeadDims[(n / 5) % kHeadDims.size()];
      if (fit(limits, p)) out.push_back(p);
    }
  }
  // Larger inputs last: several heads, long rows, to confirm what the small ones found.
  for (ProbeDesign p : {ProbeDesign{"normal", 2, 2, 256, 1000, 64, false, seed++},
                        ProbeDesign{"repeated-max", 1, 4, 512, 512, 128, false, seed++},
                        ProbeDesign{"rising-max", 1, 2, 700, 700, 64, true, seed++}}) {
    if (fit(limits, p)) out.push_back(p);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ProbeDesign& a, const ProbeDesign& b) { return a.cost() < b.cost(); });
  return out;
}

attention::AttentionInputs probe_inputs(const ProbeDesign& p, const Format& input_format) {
  const attention::AttentionShape shape{p.batch, p.heads, p.nq, p.nk, p.d, p.d};
  const bool trend = p.kind == "rising-max" || p.kind == "falling-max";
  attention::AttentionInputs in = inputs::generate(trend ? "normal" : p.kind, shape, p.seed, false);
  if (trend) add_trend(in, p.kind == "rising-max");
  const attention::SiteRounder round(attention::SiteSpec{input_format, {}, "sequential"}, 0,
                                     attention::Site::kInput);
  for (std::vector<double>* x : {&in.q, &in.k, &in.v}) {
    for (double& v : *x) v = round(v);
  }
  return in;
}

}  // namespace simprec::discover
