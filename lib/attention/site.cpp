#include "lib/attention/site.hpp"

#include <array>
#include <cctype>
#include <stdexcept>

#include "emulation/arithmetic.hpp"
#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"
#include "emulation/round.hpp"

namespace simprec::attention {
namespace {

struct SiteInfo {
  std::string_view name;
  bool accumulates;
  std::string_view description;
};

constexpr std::array<SiteInfo, kSiteCount> kSites{{
    {"input", false, "Q, K, V, dO rounded into the input format"},
    {"s", true, "scores S = Q K^T"},
    {"exp_arg", false, "exponent argument (scaled score minus scaled max)"},
    {"exp", false, "exp / exp2 of the argument (unnormalised P)"},
    {"rowsum", true, "row sum l of the un-cast P"},
    {"p_norm", false, "standard attention: P / l"},
    {"p_cast", false, "P cast before P.V"},
    {"pv_acc", true, "O accumulation of P.V (per-block mode: the block product)"},
    {"o_update", false, "per-block mode: O*alpha + block product"},
    {"o_rescale", false, "alpha = exp(m_old - m_new) and the rescale of O and l"},
    {"o_norm", false, "flash attention: 1/l and O*(1/l)"},
    {"o_out", false, "final cast of O into the output format"},
    {"lse", false, "log-sum-exp"},
    {"d", true, "D = rowsum(dO o O) (flash) or rowsum(dP o P) (standard)"},
    {"dp", true, "dP = dO V^T"},
    {"ds", false, "dS = P o (dP - D)"},
    {"p_cast_bwd", false, "P cast before dV += P^T dO"},
    {"ds_cast", false, "dS cast before dQ and dK products"},
    {"dq_acc", true, "dQ accumulation"},
    {"dk_acc", true, "dK accumulation"},
    {"dv_acc", true, "dV accumulation"},
    {"grad_out", false, "final scale and cast of dQ, dK, dV"},
}};

}  // namespace

std::string_view site_name(Site site) {
  return kSites[static_cast<int>(site)].name;
}
bool site_accumulates(Site site) {
  return kSites[static_cast<int>(site)].accumulates;
}
std::string_view site_description(Site site) {
  return kSites[static_cast<int>(site)].description;
}

Site parse_site(std::string_view name) {
  for (int i = 0; i < kSiteCount; ++i) {
    if (kSites[i].name == name) return static_cast<Site>(i);
  }
  std::vector<std::string> names;
  for (const auto& s : kSites) names.emplace_back(s.name);
  throw std::invalid_argument("unknown rounding site '" + excerpt(name) + "'" +
                              did_you_mean(name, names) + " (known: " + site_names() + ")");
}

std::vector<Site> site_group(std::string_view name) {
  std::vector<Site> sites;
  if (name == "all") {
    for (int i = 0; i < kSiteCount; ++i) sites.push_back(static_cast<Site>(i));
  } else if (name == "products") {
    sites = {Site::kS, Site::kPvAcc, Site::kDp, Site::kDqAcc, Site::kDkAcc, Site::kDvAcc};
  }
  return sites;
}

std::string site_group_names() {
  return "all, products";
}

std::string site_names() {
  std::string known;
  for (const auto& s : kSites) known += (known.empty() ? "" : ", ") + std::string(s.name);
  return known;
}

std::string rounding_name(const Rounding& r) {
  if (r.mode == RoundingMode::kStochastic) return "sr" + std::to_string(r.sr_bits);
  return std::string(short_name(r.mode));
}

SiteSpec parse_site_spec(std::string_view text) {
  SiteSpec spec;
  size_t colon = text.find(':');
  // FORMAT:ftz is one format (subnormals flushed), as Format::name writes it.
  if (colon != std::string_view::npos && text.substr(colon + 1, 3) == "ftz" &&
      (colon + 4 == text.size() || text[colon + 4] == ':')) {
    colon = text.find(':', colon + 1);
  }
  spec.format = parse_format(text.substr(0, colon));
  require_sign(spec.format, "an attention site's values");
  if (colon == std::string_view::npos) return spec;
  std::string_view rest = text.substr(colon + 1);
  const size_t colon2 = rest.find(':');
  std::string_view mode = rest.substr(0, colon2);
  if (mode.size() > 2 && mode.substr(0, 2) == "sr" &&
      std::isdigit(static_cast<unsigned char>(mode[2]))) {
    spec.rounding.mode = RoundingMode::kStochastic;
    int bits = 0;
    for (char c : mode.substr(2)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        throw std::invalid_argument("bad stochastic rounding '" + std::string(mode) +
                                    "' (expected srN with N random bits, 1..32)");
      }
      bits = bits * 10 + (c - '0');
      if (bits > 32) break;
    }
    if (bits < 1 || bits > 32) {
      throw std::invalid_argument("bad stochastic rounding '" + std::string(mode) +
                                  "' (expected srN with N random bits, 1..32)");
    }
    spec.rounding.sr_bits = bits;
  } else {
    spec.rounding.mode = parse_rounding_mode(mode);
  }
  if (colon2 != std::string_view::npos) {
    spec.accumulation = std::string(rest.substr(colon2 + 1));
    if (spec.accumulation.empty())
      throw std::invalid_argument("empty accumulation model in '" + excerpt(text) + "'");
  }
  return spec;
}

std::string to_string(const SiteSpec& spec) {
  return spec.format.name() + ":" + rounding_name(spec.rounding) + ":" + spec.accumulation;
}

SiteRounder::SiteRounder(const SiteSpec& spec, uint64_t seed, Site site)
    : format_(spec.format), rounding_(spec.rounding) {
  // One random stream per (seed, site): the index inside the stream names the rounding event.
  stream_ = RandomStream{seed, 0x5173000000000000ULL + static_cast<uint64_t>(site)};
  const bool nearest = rounding_.mode == RoundingMode::kNearestEven;
  if (nearest && format_ == formats::fp64) {
    kind_ = Kind::kIdentity;
  } else if (nearest && format_ == formats::fp32) {
    kind_ = Kind::kFloat;
  } else if (nearest && format_.mantissa_bits <= 51 && format_.exponent_bits <= 11 &&
             format_.emin() >= -1022 && format_.emax() <= 1023) {
    kind_ = Kind::kFastNearest;
    min_normal_ = format_.min_normal();
    max_finite_ = format_.max_finite();
    shift_ = 52 - format_.mantissa_bits;
    half_minus_one_ = (uint64_t{1} << (shift_ - 1)) - 1;
    drop_mask_ = (uint64_t{1} << shift_) - 1;
  } else {
    kind_ = Kind::kGeneric;
  }
}

double SiteRounder::slow(double x, uint64_t index) const {
  return slow_with_random(x, uses_random_bits(rounding_.mode) ? random_bits(stream_, index) : 0);
}

double SiteRounder::slow_with_random(double x, uint32_t random) const {
  return decode(format_, round_to_format(format_, unrounded_from_double(x), rounding_, random));
}

double SiteRounder::slow_pair(double hi, double lo, uint64_t index) const {
  const uint32_t random = uses_random_bits(rounding_.mode) ? random_bits(stream_, index) : 0;
  const Unrounded exact =
      exact_add(unrounded_from_double(hi), unrounded_from_double(lo), rounding_.mode);
  return decode(format_, round_to_format(format_, exact, rounding_, random));
}

}  // namespace simprec::attention
