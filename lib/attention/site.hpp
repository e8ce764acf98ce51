// Named rounding sites: every place where the emulated attention rounds has a stable name, a
// format, a rounding mode and (for sums and products) an accumulation model. The same names are
// used in code, in `--set SITE=...`, in stats.json and in reports (docs/attention.md lists them).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emulation/format.hpp"
#include "emulation/random.hpp"
#include "emulation/rounding_mode.hpp"

namespace simprec::attention {

// Where the forward and backward passes round. The order is the order of the tables in reports.
enum class Site : uint8_t {
  kInput,     // Q, K, V, dO rounded into the input format before anything else
  kS,         // S = Q K^T (product; accumulation model)
  kExpArg,    // the exponent argument (and the scaled max it subtracts)
  kExp,       // exp / exp2 of the argument
  kRowsum,    // l = running sum of the un-cast P (sum; accumulation model)
  kPNorm,     // standard attention only: P / l
  kPCast,     // P cast before P.V
  kPvAcc,     // O += P V (product; accumulation model). In per-block mode, the block product
  kOUpdate,   // per-block mode only: O <- O*alpha + block product
  kORescale,  // alpha = exp(m_old - m_new) and O*alpha, l*alpha when the max grows
  kONorm,     // flash attention: 1/l and O * (1/l)
  kOOut,      // the final cast of O into the output format
  kLse,       // log-sum-exp m*scale + log(l)
  kD,         // D = rowsum(dO o O) (flash) or rowsum(dP o P) (standard); product
  kDp,        // dP = dO V^T (product)
  kDs,        // dS = P o (dP - D)
  kPCastBwd,  // P cast before dV += P^T dO
  kDsCast,    // dS cast before dQ += dS K and dK += dS^T Q
  kDqAcc,     // dQ accumulation (product)
  kDkAcc,     // dK accumulation (product)
  kDvAcc,     // dV accumulation (product)
  kGradOut,   // the final scale and cast of dQ, dK, dV into the output format
  kCount
};
inline constexpr int kSiteCount = static_cast<int>(Site::kCount);

std::string_view site_name(Site site);
// Throws std::invalid_argument listing the known names.
Site parse_site(std::string_view name);
// Every site's name, comma-separated, in report order.
std::string site_names();
// The sites of a group name: "all" (every site), "products" (the tensor-core products s, pv_acc,
// dp, dq_acc, dk_acc, dv_acc); empty for any other name. Kernel models set a group first and its
// members after (model.hpp).
std::vector<Site> site_group(std::string_view name);
std::string site_group_names();
// True for the sites whose value is a sum or dot product (they take an accumulation model).
bool site_accumulates(Site site);
std::string_view site_description(Site site);

struct SiteSpec {
  Format format = formats::fp64;
  Rounding rounding{};
  std::string accumulation = "sequential";  // product and sum sites only
  bool operator==(const SiteSpec&) const = default;
};

// "FORMAT:ROUNDING[:ACCUMULATION]" or "FORMAT" (rne, sequential), e.g. "bf16:sr16",
// "fp32:rne:tc:sm90-mma-bf16". A rounding of "srN" is stochastic with N random bits.
SiteSpec parse_site_spec(std::string_view text);
std::string to_string(const SiteSpec& spec);
std::string rounding_name(const Rounding& r);

// Rounds doubles at one site. Fast inline paths: fp64 round-to-nearest-even is the identity,
// every other IEEE-like format with round-to-nearest-even rounds a double in its normal range
// with the integer add-and-mask trick; everything else (other modes, subnormals, overflow, NaN)
// goes through the one rounding kernel, round_to_format. Random modes draw random_bits(stream,
// index): the caller passes an index unique to the rounding event within the site, so results
// do not depend on threads or order.
class SiteRounder {
 public:
  SiteRounder() = default;
  SiteRounder(const SiteSpec& spec, uint64_t seed, Site site);

  const Format& format() const { return format_; }
  const Rounding& rounding() const { return rounding_; }
  bool is_identity() const { return kind_ == Kind::kIdentity; }
  bool is_float_rne() const { return kind_ == Kind::kFloat; }
  const RandomStream& stream() const { return stream_; }

  double operator()(double x, uint64_t index = 0) const {
    switch (kind_) {
      case Kind::kIdentity:
        return x;
      case Kind::kFloat:
        return static_cast<double>(static_cast<float>(x));
      case Kind::kFastNearest: {
        const double a = std::fabs(x);
        if (a >= min_normal_ && a <= max_finite_) {
          uint64_t bits = std::bit_cast<uint64_t>(x);
          bits += half_minus_one_ + ((bits >> shift_) & 1);
          bits &= ~drop_mask_;
          const double r = std::bit_cast<double>(bits);
          if (std::fabs(r) <= max_finite_) return r;
        }
        return slow(x, index);
      }
      case Kind::kGeneric:
        return slow(x, index);
    }
    return x;
  }

  // Rounds x with caller-supplied random bits (consumed by the random modes as by
  // round_to_format) instead of the site's stream: for layouts such as tiled_random.hpp.
  double round_with_random(double x, uint32_t random) const {
    if (!uses_random_bits(rounding_.mode)) return (*this)(x);
    return slow_with_random(x, random);
  }

  // Rounds the exact value hi + lo (lo the exact error of hi = fl(hi + lo), as from TwoSum). A
  // non-finite hi is the result itself (an infinite or NaN operand; lo is then NaN, or -hi where
  // finite operands overflowed, and nearest rounding takes that overflow to infinity).
  double round_exact(double hi, double lo, uint64_t index = 0) const {
    if (lo == 0.0 || kind_ == Kind::kIdentity) return (*this)(hi, index);
    if (!std::isfinite(hi) && (kind_ == Kind::kFloat || kind_ == Kind::kFastNearest)) {
      return (*this)(hi, index);
    }
    if (kind_ == Kind::kFloat || kind_ == Kind::kFastNearest) {
      // Rounding to odd at 53 bits then to p <= 51 bits is exact for nearest rounding.
      return (*this)(to_odd(hi, lo), index);
    }
    return slow_pair(hi, lo, index);
  }

  // Round-to-odd of hi + lo at double precision, hi = RN(hi + lo), lo != 0 (so hi != 0): the
  // value truncated toward zero (one step down in magnitude when lo points inward), with its
  // last bit forced to 1 (the exact value is never representable here).
  static double to_odd(double hi, double lo) {
    uint64_t bits = std::bit_cast<uint64_t>(hi);
    if ((hi > 0) != (lo > 0)) bits -= 1;
    return std::bit_cast<double>(bits | 1);
  }

 private:
  enum class Kind : uint8_t { kIdentity, kFloat, kFastNearest, kGeneric };
  double slow(double x, uint64_t index) const;
  double slow_with_random(double x, uint32_t random) const;
  double slow_pair(double hi, double lo, uint64_t index) const;

  Kind kind_ = Kind::kIdentity;
  Format format_ = formats::fp64;
  Rounding rounding_{};
  RandomStream stream_{};
  double min_normal_ = 0, max_finite_ = 0;
  int shift_ = 0;
  uint64_t half_minus_one_ = 0, drop_mask_ = 0;
};

// (a + b) exactly as hi + lo.
inline void two_sum(double a, double b, double& hi, double& lo) {
  hi = a + b;
  const double bb = hi - a;
  lo = (a - (hi - bb)) + (b - bb);
}
// a * b exactly as hi + lo (fma gives the error exactly).
inline void two_prod(double a, double b, double& hi, double& lo) {
  hi = a * b;
  lo = std::fma(a, b, -hi);
}

}  // namespace simprec::attention
