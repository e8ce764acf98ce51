// An independent reference for rounding into simprec formats, for the tests of the emulation core.
//
// MPFR computes each operation correctly rounded to the format's precision p = mantissa bits + 1
// in MPFR's wide default exponent range; the standard recipe (mpfr_set_emin + mpfr_check_range +
// mpfr_subnormalize, with the ternary value carried along so nothing is rounded twice) then
// narrows it to the format's subnormal range. This file encodes the result into bits itself.
// Modes MPFR lacks are derived: round-to-odd from the toward-zero result and its ternary value;
// nearest-away by comparing the exact value with the midpoint of the toward-zero and away
// candidates (see Oracle::round_all). The code under test is never consulted: only the declared
// fields of a Format (exponent bits, mantissa bits, bias, policies) are read.
//
// Semantics encoded here (IEEE 754-2019 §4.3, §7.4 and the OCP FP8 spec, as the headers state):
// - overflow: a result whose rounding with unbounded exponent exceeds the largest finite value
//   becomes infinity in rne, rna, rup (positive) and rdn (negative), and the largest finite
//   value in rtz, rto, rup (negative) and rdn (positive); the format's OverflowPolicy decides
//   what stands in for infinity (kInfinity: inf, kSaturate: max finite, kNan: the NaN).
// - an exact infinity (inf input, x/0, log 0) becomes the same stand-in.
// - kFlush formats: subnormal encodings read as zero; a result whose magnitude after rounding
//   with unbounded exponent range is below the smallest normal is a zero of the result's sign.
// - fnuz formats have no -0: every zero result is +0. NaN results are the canonical NaN.
// - formats without infinity and NaN (OCP MX FP6/FP4): overflow saturates (their only policy);
//   a NaN becomes +max finite, as PTX's cvt .satfinite into e2m1/e2m3/e3m2 documents (the MX
//   spec leaves it to the implementation).
// - exponent-only formats (OCP MX E8M0): 2^(field - bias), all ones is NaN, no sign, no zero;
//   a negative value is NaN; zero and every positive value below 2^-bias give 2^-bias (field
//   0). MPFR at precision 1 breaks ties away from zero, and round-to-odd is truncation there.
#pragma once

#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulation/format.hpp"
#include "emulation/rounding_mode.hpp"

namespace oracle {

using simprec::Format;
using simprec::OverflowPolicy;
using simprec::RoundingMode;
using simprec::SpecialEncoding;

// The deterministic modes, in the order of simprec::kDeterministicRoundingModes.
inline constexpr RoundingMode kModes[6] = {RoundingMode::kNearestEven, RoundingMode::kNearestAway,
                                           RoundingMode::kTowardZero,  RoundingMode::kUp,
                                           RoundingMode::kDown,        RoundingMode::kOdd};
inline const char* mode_name(RoundingMode m) {
  switch (m) {
    case RoundingMode::kNearestEven:
      return "rne";
    case RoundingMode::kNearestAway:
      return "rna";
    case RoundingMode::kTowardZero:
      return "rtz";
    case RoundingMode::kUp:
      return "rup";
    case RoundingMode::kDown:
      return "rdn";
    case RoundingMode::kOdd:
      return "rto";
    case RoundingMode::kStochastic:
      return "sr";
    case RoundingMode::kNearestRandomTies:
      return "rnr";
  }
  return "?";
}

// What the oracle knows about a format, derived here from the declared fields only.
struct Spec {
  int m = 0, p = 0, bias = 0, width = 0;
  int emin = 0, emax = 0;  // normal range of E in 1.f * 2^E
  bool ieee = false, finite_nan = false, unsigned_zero = false, keep_subnormals = true;
  bool no_specials = false, exponent_only = false;
  OverflowPolicy overflow = OverflowPolicy::kInfinity;
  uint64_t sign_bit = 0, magnitude_all = 0, max_bits = 0, inf_bits = 0, nan_bits = 0;
  double max_finite = 0, min_normal = 0, min_subnormal = 0;
};

inline Spec spec_of(const Format& f) {
  Spec s;
  s.m = f.mantissa_bits;
  s.p = s.m + 1;
  s.bias = f.bias;
  s.exponent_only = f.special == SpecialEncoding::kExponentOnly;
  s.width = (s.exponent_only ? 0 : 1) + f.exponent_bits + f.mantissa_bits;
  s.sign_bit = s.exponent_only ? 0 : uint64_t{1} << (s.width - 1);
  s.magnitude_all = (uint64_t{1} << (f.exponent_bits + f.mantissa_bits)) - 1;
  s.keep_subnormals = f.subnormals == simprec::SubnormalPolicy::kKeep;
  s.overflow = f.overflow;
  const uint64_t field_all = (uint64_t{1} << f.exponent_bits) - 1;
  switch (f.special) {
    case SpecialEncoding::kIeee:
      s.ieee = true;
      s.inf_bits = field_all << s.m;
      s.max_bits = s.inf_bits - 1;
      s.nan_bits = s.inf_bits | (uint64_t{1} << (s.m - 1));  // quiet NaN, positive
      break;
    case SpecialEncoding::kFiniteNan:  // only S.1...1.1...1 is NaN
      s.finite_nan = true;
      s.max_bits = s.magnitude_all - 1;
      s.nan_bits = s.magnitude_all;
      break;
    case SpecialEncoding::kUnsignedZero:  // the -0 slot is the NaN
      s.unsigned_zero = true;
      s.max_bits = s.magnitude_all;
      s.nan_bits = s.sign_bit;
      break;
    case SpecialEncoding::kNone:  // every encoding is a number
      s.no_specials = true;
      s.max_bits = s.magnitude_all;
      s.nan_bits = s.max_bits;
      break;
    case SpecialEncoding::kExponentOnly:  // all ones is NaN; field 0 is 2^-bias
      s.keep_subnormals = false;
      s.max_bits = s.magnitude_all - 1;
      s.nan_bits = s.magnitude_all;
      s.emin = -s.bias;
      s.emax = static_cast<int>(s.max_bits) - s.bias;
      s.max_finite = std::ldexp(1.0, s.emax);
      s.min_normal = s.min_subnormal = std::ldexp(1.0, s.emin);
      return s;
  }
  s.emin = 1 - s.bias;
  s.emax = static_cast<int>(s.max_bits >> s.m) - s.bias;
  const uint64_t top_fraction = s.max_bits & ((uint64_t{1} << s.m) - 1);
  s.max_finite = std::ldexp(static_cast<double>((uint64_t{1} << s.m) | top_fraction), s.emax - s.m);
  s.min_normal = std::ldexp(1.0, s.emin);
  s.min_subnormal = s.keep_subnormals ? std::ldexp(1.0, s.emin - s.m) : s.min_normal;
  return s;
}

inline bool is_nan(const Spec& s, uint64_t bits) {
  const uint64_t mag = bits & s.magnitude_all;
  if (s.ieee) return mag > s.inf_bits;
  if (s.finite_nan || s.exponent_only) return mag == s.magnitude_all;
  if (s.no_specials) return false;
  return bits == s.sign_bit;
}

// The exact value of an encoding, written from the format's definition.
inline double decode(const Spec& s, uint64_t bits) {
  if (is_nan(s, bits)) return std::numeric_limits<double>::quiet_NaN();
  if (s.exponent_only) return std::ldexp(1.0, static_cast<int>(bits) - s.bias);
  const bool negative = (bits & s.sign_bit) != 0;
  const uint64_t mag = bits & s.magnitude_all;
  double v;
  if (s.ieee && mag == s.inf_bits) {
    v = std::numeric_limits<double>::infinity();
  } else {
    const uint64_t field = mag >> s.m;
    const uint64_t fraction = mag & ((uint64_t{1} << s.m) - 1);
    if (field == 0) {
      v = s.keep_subnormals ? std::ldexp(static_cast<double>(fraction), s.emin - s.m) : 0.0;
    } else {
      v = std::ldexp(static_cast<double>(fraction | (uint64_t{1} << s.m)),
                     static_cast<int>(field) - s.bias - s.m);
    }
  }
  return negative ? -v : v;
}

// The encoding of a value the format represents exactly (or +-inf for IEEE formats, or NaN).
inline uint64_t encode(const Spec& s, double v) {
  if (std::isnan(v)) return s.nan_bits;
  if (s.exponent_only) {
    int e = 0;
    if (!(v > 0) || std::frexp(v, &e) != 0.5 || e - 1 < s.emin || e - 1 > s.emax) {
      throw std::logic_error("oracle::encode: not a power of two in the exponent-only range");
    }
    return static_cast<uint64_t>(e - 1 + s.bias);
  }
  const bool negative = std::signbit(v);
  const uint64_t sign = negative ? s.sign_bit : 0;
  const double a = std::fabs(v);
  if (std::isinf(a)) {
    if (!s.ieee) throw std::logic_error("oracle::encode: infinity in a format without one");
    return sign | s.inf_bits;
  }
  if (a == 0) return s.unsigned_zero ? 0 : sign;
  const int e = std::ilogb(a);
  uint64_t mag;
  if (e < s.emin) {
    const double k = std::ldexp(a, s.m - s.emin);
    if (!s.keep_subnormals || k != std::floor(k) || k >= std::ldexp(1.0, s.m)) {
      throw std::logic_error("oracle::encode: not a subnormal of the format");
    }
    mag = static_cast<uint64_t>(k);
  } else {
    const double k = std::ldexp(a, s.m - e);
    if (k != std::floor(k)) throw std::logic_error("oracle::encode: too many bits");
    mag = (static_cast<uint64_t>(e + s.bias) << s.m) |
          (static_cast<uint64_t>(k) - (uint64_t{1} << s.m));
  }
  if (mag > s.max_bits) throw std::logic_error("oracle::encode: beyond the largest finite value");
  return sign | mag;
}

// IEEE 754 §7.4 with the format's stand-in for infinity.
inline uint64_t overflow_bits(const Spec& s, bool negative, RoundingMode mode) {
  if (s.exponent_only && negative) return s.nan_bits;
  const uint64_t sign = negative ? s.sign_bit : 0;
  bool to_infinity = false;
  switch (mode) {
    case RoundingMode::kNearestEven:
    case RoundingMode::kNearestAway:
      to_infinity = true;
      break;
    case RoundingMode::kUp:
      to_infinity = !negative;
      break;
    case RoundingMode::kDown:
      to_infinity = negative;
      break;
    default:
      to_infinity = false;
  }
  if (!to_infinity || s.overflow == OverflowPolicy::kSaturate) return sign | s.max_bits;
  if (s.overflow == OverflowPolicy::kNan || !s.ieee) return s.nan_bits;
  return sign | s.inf_bits;
}

inline uint64_t infinity_bits(const Spec& s, bool negative) {
  if (s.exponent_only && negative) return s.nan_bits;
  const uint64_t sign = negative ? s.sign_bit : 0;
  if (s.overflow == OverflowPolicy::kSaturate) return sign | s.max_bits;
  if (s.overflow == OverflowPolicy::kNan || !s.ieee) return s.nan_bits;
  return sign | s.inf_bits;
}

// A finite value rounded with unbounded exponent range (and, for formats that keep them, in
// the subnormal range) to its encoding: overflow and flush-to-zero applied here.
inline uint64_t finish_value(const Spec& s, double v, RoundingMode mode) {
  const bool negative = std::signbit(v);
  if (s.exponent_only) {
    if (negative && v != 0) return s.nan_bits;
    if (std::fabs(v) > s.max_finite) return overflow_bits(s, false, mode);
    if (std::fabs(v) < s.min_normal) return 0;  // zero and below: the smallest value
    return encode(s, std::fabs(v));
  }
  if (std::fabs(v) > s.max_finite) return overflow_bits(s, negative, mode);
  if (!s.keep_subnormals && v != 0 && std::fabs(v) < s.min_normal) {
    return s.unsigned_zero || !negative ? 0 : s.sign_bit;
  }
  return encode(s, v);
}

class Oracle {
 public:
  explicit Oracle(const Format& f) : s_(spec_of(f)) {
    for (mpfr_ptr x : {n_, z_, u_, d_}) mpfr_init2(x, s_.p);
    mpfr_init2(hi_, s_.p + 2);
    mpfr_init2(mid_, s_.p + 2);
  }
  ~Oracle() {
    for (mpfr_ptr x : {n_, z_, u_, d_, hi_, mid_}) mpfr_clear(x);
  }
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;
  const Spec& spec() const { return s_; }

  // `eval(rop, rnd)` must set rop to the exact result correctly rounded to rop's precision in
  // direction rnd and return MPFR's ternary value (any MPFR function of exact inputs does).
  // out[i] is the encoding in mode kModes[i].
  template <class Eval>
  void round_all(Eval&& eval, uint64_t out[6]) {
    bool huge_n, huge_z, huge_u, huge_d;
    rounded(n_, MPFR_RNDN, eval, huge_n);
    out[0] = finish(n_, huge_n, RoundingMode::kNearestEven);
    const int tz = rounded(z_, MPFR_RNDZ, eval, huge_z);
    out[2] = finish(z_, huge_z, RoundingMode::kTowardZero);
    rounded(u_, MPFR_RNDU, eval, huge_u);
    out[3] = finish(u_, huge_u, RoundingMode::kUp);
    rounded(d_, MPFR_RNDD, eval, huge_d);
    out[4] = finish(d_, huge_d, RoundingMode::kDown);
    if (mpfr_nan_p(z_) || mpfr_inf_p(z_) || tz == 0) {  // NaN, infinity or exact
      out[1] = finish(z_, huge_z, RoundingMode::kNearestAway);
      out[5] = finish(z_, huge_z, RoundingMode::kOdd);
      return;
    }
    // The candidates: z toward zero, a away from zero (rup for positive, rdn for negative;
    // an underflowed z keeps the sign of the exact value).
    const bool negative = mpfr_signbit(z_) != 0;
    mpfr_ptr a = negative ? d_ : u_;
    const bool huge_a = negative ? huge_d : huge_u;
    if (huge_a || mpfr_inf_p(a)) {
      out[1] = overflow_bits(s_, negative, RoundingMode::kNearestAway);
    } else {
      // mid = (z + a) / 2 has at most p + 1 significant bits: exact at p + 2.
      if (mpfr_add(mid_, z_, a, MPFR_RNDN) != 0) throw std::logic_error("oracle: inexact midpoint");
      mpfr_div_2ui(mid_, mid_, 1, MPFR_RNDN);
      // hi = the exact value truncated to p + 2 bits. mid is representable there, so by
      // monotonicity |hi| >= |mid| exactly when |exact| >= |mid|: then nearest-away takes a.
      mpfr_clear_flags();
      eval(hi_, MPFR_RNDZ);
      out[1] = finish(mpfr_cmpabs(hi_, mid_) >= 0 ? a : z_, false, RoundingMode::kNearestAway);
    }
    out[5] = round_to_odd(huge_z);
  }

  template <class Eval>
  uint64_t round(RoundingMode mode, Eval&& eval) {
    uint64_t out[6];
    round_all(eval, out);
    for (int i = 0; i < 6; ++i) {
      if (kModes[i] == mode) return out[i];
    }
    throw std::logic_error("oracle: not a deterministic mode");
  }

 private:
  // eval at precision p in direction rnd, then narrowed to the format's subnormal range.
  template <class Eval>
  int rounded(mpfr_ptr r, mpfr_rnd_t rnd, Eval& eval, bool& huge) {
    mpfr_clear_flags();
    int t = eval(r, rnd);
    huge = mpfr_overflow_p() != 0;  // beyond MPFR's own range: far beyond every format
    if (s_.keep_subnormals && mpfr_regular_p(r)) {
      const mpfr_exp_t old_emin = mpfr_get_emin();
      mpfr_set_emin(s_.emin - s_.m + 1);  // MPFR's exponent of the smallest subnormal
      t = mpfr_check_range(r, t, rnd);
      t = mpfr_subnormalize(r, t, rnd);
      mpfr_set_emin(old_emin);
    }
    return t;
  }

  uint64_t finish(mpfr_srcptr r, bool huge, RoundingMode mode) const {
    if (mpfr_nan_p(r)) return s_.nan_bits;
    const bool negative = mpfr_signbit(r) != 0;
    if (huge) return overflow_bits(s_, negative, mode);
    if (mpfr_inf_p(r)) return infinity_bits(s_, negative);  // an exact infinity
    const double v = mpfr_get_d(r, MPFR_RNDN);  // exact: <= 53 bits, inside double's range
    if (std::isinf(v)) return overflow_bits(s_, negative, mode);
    return finish_value(s_, v, mode);
  }

  // Toward zero, then the last bit (at the format's quantum for this magnitude) set if the
  // toward-zero result was inexact.
  uint64_t round_to_odd(bool huge_z) const {
    const bool negative = mpfr_signbit(z_) != 0;
    if (huge_z) return overflow_bits(s_, negative, RoundingMode::kOdd);
    const double z = mpfr_get_d(z_, MPFR_RNDN);
    if (std::isinf(z)) return overflow_bits(s_, negative, RoundingMode::kOdd);
    double a = std::fabs(z);
    if (a == 0) {
      if (!s_.keep_subnormals) return finish_value(s_, z, RoundingMode::kOdd);  // flushed
      a = s_.min_subnormal;
    } else {
      const int e = std::ilogb(a);
      const int quantum = (s_.keep_subnormals ? std::max(e, s_.emin) : e) - s_.m;
      const double k = std::ldexp(a, -quantum);
      if (std::fmod(k, 2.0) == 0.0) a += std::ldexp(1.0, quantum);
    }
    return finish_value(s_, negative ? -a : a, RoundingMode::kOdd);
  }

  Spec s_;
  mpfr_t n_, z_, u_, d_, hi_, mid_;
};

// The oracle's roundings of the double x (exact in MPFR at 64 bits), in kModes order.
inline void round_double_all(Oracle& o, double x, uint64_t out[6]) {
  mpfr_t v;
  mpfr_init2(v, 64);
  mpfr_set_d(v, x, MPFR_RNDN);
  o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, v, rnd); }, out);
  mpfr_clear(v);
}

// Exact MPFR inputs from doubles (64 bits hold any double exactly).
struct Inputs {
  mpfr_t x, y, w;
  Inputs() {
    mpfr_init2(x, 64);
    mpfr_init2(y, 64);
    mpfr_init2(w, 64);
  }
  ~Inputs() {
    mpfr_clear(x);
    mpfr_clear(y);
    mpfr_clear(w);
  }
  Inputs(const Inputs&) = delete;
  Inputs& operator=(const Inputs&) = delete;
  void set(double a, double b = 0, double c = 0) {
    mpfr_set_d(x, a, MPFR_RNDN);
    mpfr_set_d(y, b, MPFR_RNDN);
    mpfr_set_d(w, c, MPFR_RNDN);
  }
};

inline std::string hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// Collects disagreements; the test prints the first few and the count.
struct Mismatches {
  uint64_t count = 0;
  std::vector<std::string> first;
  void add(const std::string& what) {
    if (first.size() < 12) first.push_back(what);
    ++count;
  }
  void merge(const Mismatches& o) {
    for (const auto& w : o.first) {
      if (first.size() < 12) first.push_back(w);
    }
    count += o.count;
  }
  std::string report() const {
    std::string r = std::to_string(count) + " mismatches";
    for (const auto& w : first) r += "\n  " + w;
    return r;
  }
};

// A fast reference for converting every float of one binade into a format that keeps its
// subnormals (for the exhaustive 2^32 sweep, where MPFR per element is too slow). The binade is
// (sign, biased exponent field F < 255); out[i - first] is the expected encoding of the float
// with fraction field i, for i in [first, first + count). Exact double arithmetic: |x| / q (q the
// format's quantum for this binade, a power of two) splits into an integer k and a remainder r in
// [0, 1), both exact; the mode decides from r (against 1/2) and k's parity; k counts quanta from
// the binade's first encoding. Checked against the MPFR oracle on samples in bulk_test.
template <class Bits>
void float_binade_reference(const Spec& s, RoundingMode mode, bool negative, int field, Bits* out,
                            int64_t first = 0, int64_t count = int64_t{1} << 23) {
  const int binade = field == 0 ? -127 : field - 127;  // any E below -126 behaves the same
  const int e = std::max(binade, s.emin);
  const double unit = std::ldexp(1.0, std::max(field, 1) - 150);
  const double lead = field == 0 ? 0.0 : 0x1p23;
  const double inv_q = std::ldexp(1.0, s.m - e);
  const int64_t base = static_cast<int64_t>(e - s.emin) << s.m;
  const uint64_t sign = negative ? s.sign_bit : 0;
  const int64_t max_bits = static_cast<int64_t>(s.max_bits);
  const uint64_t overflow = overflow_bits(s, negative, mode);
  const uint64_t zero = s.unsigned_zero ? 0 : sign;
  // Whole binades on one side of the range (most of them, for narrow formats) round to one
  // value: every |x| >= 2^(emax+1) overflows; every nonzero |x| < 2^(binade+1) <= half the
  // smallest subnormal goes to 0 or to the smallest subnormal by mode (the formula below gives
  // the same, per element; this only saves time).
  const bool all_overflow = binade >= s.emax + 1;
  const bool all_tiny = s.keep_subnormals && std::ldexp(1.0, binade + 1) <= s.min_subnormal / 2;
  if (all_overflow || all_tiny) {
    uint64_t value = overflow;
    if (all_tiny) {
      const bool away = mode == RoundingMode::kOdd || (mode == RoundingMode::kUp && !negative) ||
                        (mode == RoundingMode::kDown && negative);
      value = away ? (sign | 1) : zero;
    }
    for (int64_t i = first; i < first + count; ++i) {
      out[i - first] = static_cast<Bits>(field == 0 && i == 0 ? zero : value);
    }
    return;
  }
  for (int64_t i = first; i < first + count; ++i) {
    const double t = (lead + static_cast<double>(i)) * unit * inv_q;  // exact, in [0, 2^(m+1))
    // Truncation is floor for t >= 0, and a single instruction without SSE4.1 (std::floor is a
    // library call in the portable build, which made this loop most of the heavy tier's time).
    const int64_t ki = static_cast<int64_t>(t);
    const double r = t - static_cast<double>(ki);  // exact
    int64_t up;
    switch (mode) {
      case RoundingMode::kNearestEven:
        up = r > 0.5 || (r == 0.5 && (ki & 1));
        break;
      case RoundingMode::kNearestAway:
        up = r >= 0.5;
        break;
      case RoundingMode::kTowardZero:
        up = 0;
        break;
      case RoundingMode::kUp:
        up = r > 0 && !negative;
        break;
      case RoundingMode::kDown:
        up = r > 0 && negative;
        break;
      case RoundingMode::kOdd:
        up = r > 0 && !(ki & 1);
        break;
      default:
        up = 0;
    }
    const int64_t kq = ki + up;
    const int64_t bits = base + kq;
    out[i - first] = static_cast<Bits>(kq == 0           ? zero
                                       : bits > max_bits ? overflow
                                                         : sign | static_cast<uint64_t>(bits));
  }
}

// The operations the arithmetic tests compare, as MPFR evaluations of exact inputs.
enum class Op { kAdd, kSub, kMul, kDiv, kFma, kSqrt };
inline const char* op_name(Op op) {
  switch (op) {
    case Op::kAdd:
      return "add";
    case Op::kSub:
      return "sub";
    case Op::kMul:
      return "mul";
    case Op::kDiv:
      return "div";
    case Op::kFma:
      return "fma";
    case Op::kSqrt:
      return "sqrt";
  }
  return "?";
}
inline int mpfr_op(Op op, mpfr_ptr r, const Inputs& in, mpfr_rnd_t rnd) {
  switch (op) {
    case Op::kAdd:
      return mpfr_add(r, in.x, in.y, rnd);
    case Op::kSub:
      return mpfr_sub(r, in.x, in.y, rnd);
    case Op::kMul:
      return mpfr_mul(r, in.x, in.y, rnd);
    case Op::kDiv:
      return mpfr_div(r, in.x, in.y, rnd);
    case Op::kFma:
      return mpfr_fma(r, in.x, in.y, in.w, rnd);
    case Op::kSqrt:
      return mpfr_sqrt(r, in.x, rnd);
  }
  return 0;
}

}  // namespace oracle
