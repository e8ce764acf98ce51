#include "emulation/elementary.hpp"

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <limits>
#include <numbers>

#include "emulation/cpu_level.hpp"
#include "emulation/mpfr_bridge.hpp"
#if SIMPREC_AVX512_KERNELS
#include <immintrin.h>
#define SIMPREC_EXP_FP32_AVX512 1
#endif

namespace simprec {
namespace {

using MpfrFunction = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

// MPFR keeps per-thread caches (constants such as log 2, a pool of integers) that it frees only
// when asked. The fallback below runs on worker threads, so each thread that uses it asks
// before it ends; otherwise the caches of every finished worker are lost (LeakSanitizer).
struct MpfrThreadCaches {
  ~MpfrThreadCaches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
};

// Rounds f(x) given the libm approximation y of it, falling back to MPFR when the +-4 ulp
// interval around y straddles a rounding boundary.
uint64_t round_via_interval(RoundingContext& ctx, double x, double y, MpfrFunction exact) {
  const uint32_t random = ctx.draw();
  const Format& f = ctx.format();
  if (std::isfinite(y) && std::fabs(y) >= std::numeric_limits<double>::min()) {
    Unrounded lo = unrounded_from_double(y);
    Unrounded hi = lo;
    lo.significand -= 4;  // a normal double's significand is >= 2^52
    hi.significand += 4;
    const uint64_t a = round_to_format(f, lo, ctx.rounding(), random);
    const uint64_t b = round_to_format(f, hi, ctx.rounding(), random);
    if (a == b) return a;
  }
  thread_local MpfrThreadCaches caches_freed_at_thread_exit;
  mpfr_t mx, my;
  mpfr_init2(mx, 53);
  mpfr_init2(my, 120);
  mpfr_set_d(mx, x, MPFR_RNDN);  // exact
  mpfr_clear_flags();
  const int ternary = exact(my, mx, MPFR_RNDZ);
  const Unrounded u = unrounded_from_mpfr(my, ternary);
  mpfr_clear(mx);
  mpfr_clear(my);
  return round_to_format(f, u, ctx.rounding(), random);
}

}  // namespace

uint64_t exp_of(RoundingContext& ctx, double x) {
  return round_via_interval(ctx, x, std::exp(x), mpfr_exp);
}
uint64_t exp2_of(RoundingContext& ctx, double x) {
  return round_via_interval(ctx, x, std::exp2(x), mpfr_exp2);
}
uint64_t log_of(RoundingContext& ctx, double x) {
  return round_via_interval(ctx, x, std::log(x), mpfr_log);
}
uint64_t log2_of(RoundingContext& ctx, double x) {
  return round_via_interval(ctx, x, std::log2(x), mpfr_log2);
}
uint64_t tanh_of(RoundingContext& ctx, double x) {
  return round_via_interval(ctx, x, std::tanh(x), mpfr_tanh);
}

namespace {

// exp(x) < 2^-150 (half the smallest subnormal float) below -150 ln 2: the result is +0.
constexpr double kExpFp32ZeroBelow = -103.97207708399179;

// Whether a double y in the normal float range [2^-126, 2^128) lies within `slack` ulps (of
// double) of a midpoint between two adjacent floats: float rounding drops 29 of its 52 fraction
// bits, and the midpoints are where those read 1 followed by 28 zeros.
bool near_float_midpoint(double y, uint64_t slack) {
  constexpr uint64_t kDropped = (uint64_t{1} << 29) - 1, kMidpoint = uint64_t{1} << 28;
  const uint64_t low = std::bit_cast<uint64_t>(y) & kDropped;
  return (low > kMidpoint ? low - kMidpoint : kMidpoint - low) <= slack;
}

}  // namespace

namespace {

// f(x) correctly rounded to fp32 nearest-even from the C library's double y = f(x) (within 1 ulp
// of f(x) on glibc; 4 ulps of slack, as round_via_interval allows), for a result that is neither
// 0 nor a NaN: y rounded to float, unless y lies within the slack of a float rounding boundary,
// where `of` (MPFR when the interval does not decide) rounds f(x) itself.
float fp32_from_libm(double x, double y, uint64_t (*of)(RoundingContext&, double)) {
  constexpr uint64_t kSlack = 4;
  if (!(y < 0x1p128)) return static_cast<float>(y);  // > FLT_MAX + half an ulp: inf; or NaN
  if (y >= 0x1p-126) {
    if (!near_float_midpoint(y, kSlack)) return static_cast<float>(y);
  } else {
    // Subnormal results are multiples of 2^-149: u = y * 2^149 (exact) rounds to an integer,
    // with midpoints at half-integers; u - floor(u) is exact.
    const double u = y * 0x1p149;
    const double ulp = std::ldexp(1.0, std::ilogb(u) - 52);
    if (std::fabs(u - std::floor(u) - 0.5) > static_cast<double>(kSlack) * ulp) {
      return static_cast<float>(y);
    }
  }
  RoundingContext ctx(formats::fp32, Rounding{});
  return static_cast<float>(decode(formats::fp32, of(ctx, x)));
}

}  // namespace

float exp_fp32(float x) {
  const double xd = x;
  if (xd < kExpFp32ZeroBelow) return 0.0f;  // -inf included
  return fp32_from_libm(xd, std::exp(xd), exp_of);
}

float exp2_fp32(float x) {
  const double xd = x;
  // 2^x <= 2^-150, half the smallest subnormal: +0 (2^-150 itself ties to the even 0).
  if (xd <= -150.0) return 0.0f;  // -inf included
  return fp32_from_libm(xd, std::exp2(xd), exp2_of);
}

#if defined(SIMPREC_EXP_FP32_AVX512)
namespace {

// 2^(k/16), k = 0..15, as two vectors for one two-source permute.
struct Exp2Table {
  __m512d lo, hi;
  [[SIMPREC_TARGET_V4]] Exp2Table() {
    alignas(64) double t[16];
    for (int k = 0; k < 16; ++k) t[k] = std::exp2(k / 16.0);
    lo = _mm512_load_pd(t);
    hi = _mm512_load_pd(t + 8);
  }
};

// 2^(n/16) e^r for |r| <= ln2/32 and |n| < 2^11 given as the low bits of t (the shifter's
// double): the table's 2^((n mod 16)/16), the exponent field raised by n div 16, and e^r by its
// Taylor polynomial of degree 6 (truncation r^7/7! < 2^-51).
[[SIMPREC_TARGET_V4]] __m512d exp_reduced(__m512d r, __m512i ni, const Exp2Table& table) {
  __m512d p = _mm512_set1_pd(1.0 / 720);
  for (const double c : {1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0}) {
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(c));
  }
  const __m512d power =
      _mm512_permutex2var_pd(table.lo, _mm512_and_si512(ni, _mm512_set1_epi64(15)), table.hi);
  const __m512i scale = _mm512_slli_epi64(_mm512_srai_epi64(ni, 4), 52);
  return _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(_mm512_mul_pd(power, p)), scale));
}

// exp(x) for x in [-87, 88]: x = n ln2/16 + r, |r| <= ln2/32. Relative error below 2^-48 in all:
// the caller treats results within 2^10 ulps of a rounding boundary as undecided.
[[SIMPREC_TARGET_V4]] __m512d exp_pd(__m512d x, const Exp2Table& table) {
  // ln 2 / 16 as hi + lo (ln 2's double and the double of its remainder, divided by 16).
  constexpr double kLn2Over16Hi = 0x1.62e42fefa39efp-5, kLn2Over16Lo = 0x1.abc9e3b39803fp-60;
  // n = round(16 x / ln 2) in the low bits of t (|n| < 2^11, far below the 2^51 of the shifter).
  const __m512d shifter = _mm512_set1_pd(0x1.8p52);
  const __m512d t = _mm512_fmadd_pd(x, _mm512_set1_pd(16 / std::numbers::ln2), shifter);
  const __m512d n = _mm512_sub_pd(t, shifter);
  const __m512i ni = _mm512_sub_epi64(_mm512_castpd_si512(t), _mm512_castpd_si512(shifter));
  __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(kLn2Over16Hi), x);
  r = _mm512_fnmadd_pd(n, _mm512_set1_pd(kLn2Over16Lo), r);
  return exp_reduced(r, ni, table);
}

// 2^x for a float x in [-126, 127]: x = n/16 + f with n = round(16 x) (16 x is exact) and
// f = x - n/16 exact (|f| <= 1/32, and x's last bit is at most 2^-29 below its leading one for
// |x| >= 1/32; n = 0 below), then e^(f ln 2): the product's rounding adds under 2^-56 absolute,
// so the relative error stays below 2^-48.
[[SIMPREC_TARGET_V4]] __m512d exp2_pd(__m512d x, const Exp2Table& table) {
  const __m512d shifter = _mm512_set1_pd(0x1.8p52);
  const __m512d t = _mm512_fmadd_pd(x, _mm512_set1_pd(16.0), shifter);
  const __m512d n = _mm512_sub_pd(t, shifter);
  const __m512i ni = _mm512_sub_epi64(_mm512_castpd_si512(t), _mm512_castpd_si512(shifter));
  const __m512d f = _mm512_fnmadd_pd(n, _mm512_set1_pd(1.0 / 16), x);
  return exp_reduced(_mm512_mul_pd(f, _mm512_set1_pd(std::numbers::ln2)), ni, table);
}

// y[i] = f(x[i]) rounded to fp32 for i < n, 16 at a time: kernel(x) (relative error below 2^-48)
// for x in [lo, hi] where the result is a normal float, +0 where x < zero_below (or <= with
// zero_inclusive), and scalar(x) for the rest and for results within 2^10 ulps of a rounding
// boundary. Returns the count done (a multiple of 16); x == y is allowed.
template <class Kernel>
[[SIMPREC_TARGET_V4]] size_t fp32_batch(const float* x, float* y, size_t n, double lo, double hi,
                                        double zero_below, int zero_predicate, Kernel kernel,
                                        float (*scalar)(float)) {
  static const Exp2Table table;
  constexpr uint64_t kSlack = uint64_t{1} << 10;
  const __m512i dropped = _mm512_set1_epi64((int64_t{1} << 29) - 1);
  const __m512i midpoint = _mm512_set1_epi64(int64_t{1} << 28);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 xf = _mm512_loadu_ps(x + i);
    __m256 half[2];
    __mmask8 undecided[2];
    for (int h = 0; h < 2; ++h) {
      const __m512d xd =
          _mm512_cvtps_pd(h == 0 ? _mm512_castps512_ps256(xf) : _mm512_extractf32x8_ps(xf, 1));
      const __mmask8 in = _mm512_cmp_pd_mask(xd, _mm512_set1_pd(lo), _CMP_GE_OQ) &
                          _mm512_cmp_pd_mask(xd, _mm512_set1_pd(hi), _CMP_LE_OQ);
      const __mmask8 zero = zero_predicate == _CMP_LE_OQ
                                ? _mm512_cmp_pd_mask(xd, _mm512_set1_pd(zero_below), _CMP_LE_OQ)
                                : _mm512_cmp_pd_mask(xd, _mm512_set1_pd(zero_below), _CMP_LT_OQ);
      const __m512d e = kernel(_mm512_maskz_mov_pd(in, xd), table);
      const __m512i low = _mm512_and_si512(_mm512_castpd_si512(e), dropped);
      const __m512i distance = _mm512_abs_epi64(_mm512_sub_epi64(low, midpoint));
      const __mmask8 clear = _mm512_mask_cmpgt_epu64_mask(in, distance, _mm512_set1_epi64(kSlack));
      undecided[h] = static_cast<__mmask8>(~(clear | zero));
      half[h] = _mm256_maskz_mov_ps(static_cast<__mmask8>(~zero), _mm512_cvtpd_ps(e));
    }
    _mm512_storeu_ps(y + i, _mm512_insertf32x8(_mm512_castps256_ps512(half[0]), half[1], 1));
    unsigned todo = undecided[0] | (unsigned{undecided[1]} << 8);
    if (todo == 0) continue;
    alignas(64) float args[16];  // x itself may be overwritten by now (x == y)
    _mm512_store_ps(args, xf);
    for (; todo != 0; todo &= todo - 1) {
      const int lane = std::countr_zero(todo);
      y[i + lane] = scalar(args[lane]);
    }
  }
  return i;
}

}  // namespace
#endif

void exp_fp32(const float* x, float* y, size_t n) {
  size_t i = 0;
#if defined(SIMPREC_EXP_FP32_AVX512)
  if (cpu_level() == CpuLevel::kV4) {
    i = fp32_batch(x, y, n, -87.0, 88.0, kExpFp32ZeroBelow, _CMP_LT_OQ, exp_pd,
                   static_cast<float (*)(float)>(exp_fp32));
  }
#endif
  for (; i < n; ++i) y[i] = exp_fp32(x[i]);
}

void exp2_fp32(const float* x, float* y, size_t n) {
  size_t i = 0;
#if defined(SIMPREC_EXP_FP32_AVX512)
  if (cpu_level() == CpuLevel::kV4) {
    i = fp32_batch(x, y, n, -126.0, 127.0, -150.0, _CMP_LE_OQ, exp2_pd,
                   static_cast<float (*)(float)>(exp2_fp32));
  }
#endif
  for (; i < n; ++i) y[i] = exp2_fp32(x[i]);
}

uint64_t exp(RoundingContext& ctx, uint64_t a) {
  return exp_of(ctx, decode(ctx.format(), a));
}
uint64_t exp2(RoundingContext& ctx, uint64_t a) {
  return exp2_of(ctx, decode(ctx.format(), a));
}
uint64_t log(RoundingContext& ctx, uint64_t a) {
  return log_of(ctx, decode(ctx.format(), a));
}

}  // namespace simprec
