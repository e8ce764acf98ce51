#include "emulation/bulk.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "emulation/round.hpp"

namespace simprec {
namespace {

constexpr size_t kBlock = 1024;
constexpr size_t kMinPerThread = size_t{1} << 16;

template <class In>
struct IeeeLayout;
template <>
struct IeeeLayout<float> {
  using U = uint32_t;
  static constexpr int kWidth = 32, kMantissa = 23, kBias = 127;
};
template <>
struct IeeeLayout<double> {
  using U = uint64_t;
  static constexpr int kWidth = 64, kMantissa = 52, kBias = 1023;
};

// The vectorised path handles inputs whose exponent range covers the target's (so that target
// subnormals come from input normals and input subnormals land below the target's range) and
// targets with fewer mantissa bits than the input.
template <class In>
bool fast_path_applies(const Format& f) {
  using L = IeeeLayout<In>;
  // The kernel works in the input's lane width, sign bit included: a wider target (possible
  // with a custom bias, e.g. 1+10+22 bits from float) would lose its sign bit there.
  // Exponent-only formats (no sign, no zero, field 0 normal) take the scalar kernel.
  return f.has_sign() && f.mantissa_bits < L::kMantissa && f.emin() >= 1 - L::kBias &&
         f.width() <= L::kWidth;
}

// Constants of one (input type, target format) pair.
template <class In>
struct Plan {
  using L = IeeeLayout<In>;
  using U = typename L::U;
  int shift_normal;     // input mantissa bits dropped for a normal result
  int64_t emin_biased;  // input biased exponent of the target's smallest normal
  U rebias;             // subtracting it moves the exponent field to the target's bias
  U max_bits;           // target's largest finite magnitude encoding
  uint64_t sign_out;    // target sign bit
  bool unsigned_zero;   // fnuz: a negative zero result is +0
  bool flush;           // subnormal results go through the scalar kernel
  explicit Plan(const Format& f)
      : shift_normal(L::kMantissa - f.mantissa_bits),
        emin_biased(f.emin() + L::kBias),
        rebias(static_cast<U>(static_cast<U>(L::kBias - f.bias) << L::kMantissa)),
        max_bits(static_cast<U>(f.max_finite_bits())),
        sign_out(f.sign_mask()),
        unsigned_zero(!f.has_negative_zero()),
        flush(!f.keeps_subnormals()) {}
};

// Rounds one block. `fix[i]` is set where the scalar kernel must redo element i.
template <RoundingMode M, bool kSameRange, bool kMarkFixes, class In, class Bits>
bool round_block_fast(const Plan<In>& p, const In* in, Bits* out, uint8_t* fix, size_t n,
                      const uint32_t* random, int sr_bits) {
  using L = IeeeLayout<In>;
  using U = typename L::U;
  constexpr U kAbs = (U{1} << (L::kWidth - 1)) - 1;
  constexpr U kFrac = (U{1} << L::kMantissa) - 1;
  constexpr U kExpAllOnes = (U{1} << (L::kWidth - 1 - L::kMantissa)) - 1;
  const U keep_mask = sr_bits >= 32 ? ~U{0} : ~((U{1} << (32 - sr_bits)) - 1) & 0xffffffffu;
  // Written without short-circuit operators so that the loop is a straight line the compiler
  // vectorises; all arithmetic stays in the input's lane width.
  using S = std::make_signed_t<U>;
  const S emin_biased = static_cast<S>(p.emin_biased);
  const S shift_normal = p.shift_normal;
  const U unsigned_zero = p.unsigned_zero;
  const U flush = p.flush;
  const U sign_shift = static_cast<U>(std::countr_zero(p.sign_out));
  U any_special = 0;
  for (size_t i = 0; i < n; ++i) {
    U x;
    std::memcpy(&x, in + i, sizeof x);
    const U a = x & kAbs;
    const U negative = x >> (L::kWidth - 1);
    const U field = a >> L::kMantissa;
    const U field_eff = field + static_cast<U>(field == 0);
    const U sig = (a & kFrac) | (static_cast<U>(field != 0) << L::kMantissa);
    U normal, tiny, s, base;
    if constexpr (kSameRange) {
      // The target shares the input's exponent field (bf16, tf32 from float): every finite
      // input, subnormals included, keeps its exponent; only mantissa bits are dropped.
      normal = 1;
      tiny = 0;
      s = static_cast<U>(shift_normal);
      base = a;
    } else {
      const S d = emin_biased - static_cast<S>(field_eff);
      normal = static_cast<U>(d <= 0);
      const S s_sub = shift_normal + d;
      tiny = static_cast<U>(s_sub > L::kMantissa + 1);
      const S s_clamped = s_sub < L::kMantissa + 1 ? s_sub : L::kMantissa + 1;
      s = static_cast<U>(normal ? shift_normal : s_clamped);
      base = normal ? a - p.rebias : sig;
    }
    const U unit = U{1} << s;
    U q;
    if constexpr (M == RoundingMode::kNearestEven) {
      q = (base + (unit / 2 - 1) + ((base >> s) & 1)) >> s;
    } else if constexpr (M == RoundingMode::kNearestAway) {
      q = (base + unit / 2) >> s;
    } else if constexpr (M == RoundingMode::kTowardZero) {
      q = base >> s;
    } else if constexpr (M == RoundingMode::kUp) {
      q = (base + ((unit - 1) & (negative - 1))) >> s;
    } else if constexpr (M == RoundingMode::kDown) {
      q = (base + ((unit - 1) & (U{0} - negative))) >> s;
    } else if constexpr (M == RoundingMode::kOdd) {
      q = (base >> s) | static_cast<U>((base & (unit - 1)) != 0);
    } else if constexpr (M == RoundingMode::kStochastic) {
      // The top sr_bits of a 32-bit word, scaled to the s dropped bits (see round.cpp).
      const U r = static_cast<U>(random[i] & keep_mask);
      U scaled;
      if constexpr (L::kWidth == 32) {
        scaled = r >> (32 - s);
      } else {
        scaled = (r << 32) >> (64 - s);
      }
      q = (base + scaled) >> s;
    } else {  // kNearestRandomTies
      q = (base + (unit / 2 - 1) + (random[i] & 1)) >> s;
    }
    const U special = static_cast<U>(field == kExpAllOnes) | tiny | static_cast<U>(q > p.max_bits) |
                      // A flushed target also sends input subnormals (field 0) to the scalar
                      // kernel: where the target's emin equals the input's, they count as normal.
                      (flush & ((normal ^ 1) | static_cast<U>(field == 0)));
    if constexpr (kMarkFixes) fix[i] = static_cast<uint8_t>(special);
    any_special |= special;
    const U sign = negative & ~(unsigned_zero & static_cast<U>(q == 0));
    out[i] = static_cast<Bits>(q | (sign << sign_shift));
  }
  return any_special != 0;
}

#if defined(__AVX512F__)
// float -> bf16, nearest-even, the hottest case: the same integer recipe as round_block_fast
// (add 0x7fff plus the last kept bit, keep the top half), written with AVX-512 intrinsics so
// that large outputs can bypass the cache with streaming stores: the store then costs no read of
// the destination, which is most of what separates this loop from the memory system's limit.
// Returns whether any element is NaN, infinite or overflows (those go to the scalar kernel).
template <bool kStream>
bool round_block_bf16_rne_avx512(const float* in, uint16_t* out, size_t n) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i sign_mask = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i half_minus_one = _mm512_set1_epi32(0x7fff);
  // Magnitudes from here up round to infinity or are infinity or NaN.
  const __m512i special_from = _mm512_set1_epi32(0x7f7f8000);
  __mmask16 special = 0;
  bool scalar_special = false;
  const auto scalar = [&](size_t i) {
    uint32_t x;
    std::memcpy(&x, in + i, sizeof x);
    const uint32_t a = x & 0x7fffffffu;
    scalar_special |= a >= 0x7f7f8000u;
    out[i] = static_cast<uint16_t>(((a + 0x7fffu + ((a >> 16) & 1u)) | (x & 0x80000000u)) >> 16);
  };
  size_t i = 0;
  const auto round16 = [&](size_t at) {
    const __m512i x = _mm512_loadu_si512(in + at);
    const __m512i a = _mm512_and_si512(x, abs_mask);
    special |= _mm512_cmpge_epu32_mask(a, special_from);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(a, 16), one);
    const __m512i rounded = _mm512_add_epi32(_mm512_add_epi32(a, half_minus_one), lsb);
    const __m512i with_sign = _mm512_or_si512(rounded, _mm512_and_si512(x, sign_mask));
    const __m256i packed = _mm512_cvtepi32_epi16(_mm512_srli_epi32(with_sign, 16));
    if constexpr (kStream) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(out + at), packed);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + at), packed);
    }
  };
  for (; i + 32 <= n; i += 32) {  // two vectors an iteration keep more loads in flight
    round16(i);
    round16(i + 16);
  }
  for (; i + 16 <= n; i += 16) round16(i);
  for (; i < n; ++i) scalar(i);
  return special != 0 || scalar_special;
}
#endif

template <class In, class Bits>
void round_range(std::span<const In> in, std::span<Bits> out, const BulkRounding& spec,
                 uint64_t offset) {
  const Format& f = spec.format;
  const Rounding& r = spec.rounding;
  const bool random = uses_random_bits(r.mode);
  uint32_t rnd[kBlock];
  uint8_t fix[kBlock];
  const bool fast = fast_path_applies<In>(f);
  const Plan<In> plan(f);
  const bool same_range =
      f.exponent_bits == (IeeeLayout<In>::kWidth - 1 - IeeeLayout<In>::kMantissa) &&
      f.bias == IeeeLayout<In>::kBias && f.keeps_subnormals();
  // bf16 from float with nearest-even: the intrinsics path; outputs too large to stay in cache
  // (and aligned for it) are written with streaming stores.
  const bool bf16_rne = same_range && fast && r.mode == RoundingMode::kNearestEven &&
                        f.mantissa_bits == 7 && f.overflow == OverflowPolicy::kInfinity;
  const bool stream = in.size() * sizeof(Bits) >= (size_t{4} << 20) &&
                      reinterpret_cast<uintptr_t>(out.data()) % sizeof(Bits) == 0;
  (void)bf16_rne;  // unused without AVX-512
  (void)stream;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Bits, uint16_t>) {
    if (bf16_rne) {
      // Blocks start where the output is 32-byte aligned: streaming stores need it, and a
      // cache line written partly by streaming and partly by ordinary stores is slow. The few
      // elements before the first boundary form a block of their own.
      const size_t head = std::min(
          in.size(), ((32 - reinterpret_cast<uintptr_t>(out.data()) % 32) % 32) / sizeof(Bits));
      for (size_t start = 0; start < in.size();) {
        const size_t n = start == 0 && head > 0 ? head : std::min(kBlock, in.size() - start);
        const float* src = in.data() + start;
        uint16_t* dst = out.data() + start;
        const bool any_fix = stream ? round_block_bf16_rne_avx512<true>(src, dst, n)
                                    : round_block_bf16_rne_avx512<false>(src, dst, n);
        if (any_fix) {
          if (stream) _mm_sfence();  // order the streaming stores before the fix-ups below
          round_block_fast<RoundingMode::kNearestEven, true, true>(plan, src, dst, fix, n, rnd,
                                                                   r.sr_bits);
          for (size_t i = 0; i < n; ++i) {
            if (fix[i])
              dst[i] =
                  static_cast<uint16_t>(round_to_format(f, unrounded_from_double(src[i]), r, 0));
          }
        }
        start += n;
      }
      if (stream) _mm_sfence();  // streamed data visible before the caller reads it
      return;
    }
  }
#endif
  for (size_t start = 0; start < in.size(); start += kBlock) {
    const size_t n = std::min(kBlock, in.size() - start);
    const uint64_t index = spec.first_index + offset + start;
    if (random) fill_random_bits(spec.random, index, rnd, n);
    const In* src = in.data() + start;
    Bits* dst = out.data() + start;
    if (!fast) {
      for (size_t i = 0; i < n; ++i) {
        dst[i] = static_cast<Bits>(
            round_to_format(f, unrounded_from_double(src[i]), r, random ? rnd[i] : 0));
      }
      continue;
    }
    bool any_fix = false;
    switch (r.mode) {
#define SIMPREC_BULK_CASE(MODE)                                                                 \
  case MODE:                                                                                    \
    /* First pass without marking: specials are rare, so only a block that has one is */        \
    /* rounded again with the marks the fix-up loop needs. */                                   \
    if (same_range) {                                                                           \
      any_fix = round_block_fast<MODE, true, false>(plan, src, dst, fix, n, rnd, r.sr_bits) &&  \
                round_block_fast<MODE, true, true>(plan, src, dst, fix, n, rnd, r.sr_bits);     \
    } else {                                                                                    \
      any_fix = round_block_fast<MODE, false, false>(plan, src, dst, fix, n, rnd, r.sr_bits) && \
                round_block_fast<MODE, false, true>(plan, src, dst, fix, n, rnd, r.sr_bits);    \
    }                                                                                           \
    break;
      SIMPREC_BULK_CASE(RoundingMode::kNearestEven)
      SIMPREC_BULK_CASE(RoundingMode::kNearestAway)
      SIMPREC_BULK_CASE(RoundingMode::kTowardZero)
      SIMPREC_BULK_CASE(RoundingMode::kUp)
      SIMPREC_BULK_CASE(RoundingMode::kDown)
      SIMPREC_BULK_CASE(RoundingMode::kOdd)
      SIMPREC_BULK_CASE(RoundingMode::kStochastic)
      SIMPREC_BULK_CASE(RoundingMode::kNearestRandomTies)
#undef SIMPREC_BULK_CASE
    }
    if (!any_fix) continue;
    for (size_t i = 0; i < n; ++i) {
      if (fix[i]) {
        dst[i] = static_cast<Bits>(
            round_to_format(f, unrounded_from_double(src[i]), r, random ? rnd[i] : 0));
      }
    }
  }
}

// Splits [0, n) into contiguous chunks (multiples of kBlock) run on their own threads.
template <class Fn>
void parallel_chunks(size_t n, unsigned threads, Fn&& fn) {
  unsigned t = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  t = static_cast<unsigned>(std::min<size_t>(t, std::max<size_t>(1, n / kMinPerThread)));
  if (t <= 1) {
    fn(size_t{0}, n);
    return;
  }
  // ceil(n / t), rounded up to whole blocks: t chunks of this size cover all n elements.
  const size_t per = ((n + t - 1) / t + kBlock - 1) / kBlock * kBlock;
  std::vector<std::jthread> pool;
  for (unsigned k = 1; k < t; ++k) {
    const size_t begin = std::min(n, k * per), end = std::min(n, (k + 1) * per);
    if (begin < end) pool.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  fn(size_t{0}, std::min(n, per));
}

void check_spec(const BulkRounding& spec, int bits_width, size_t in_size, size_t out_size) {
  if (auto problem = spec.format.validate(); !problem.empty()) throw std::invalid_argument(problem);
  if (spec.rounding.sr_bits < 1 || spec.rounding.sr_bits > 32) {
    throw std::invalid_argument("sr_bits must be 1..32, got " +
                                std::to_string(spec.rounding.sr_bits));
  }
  if (bits_width < spec.format.width()) {
    throw std::invalid_argument("output elements of " + std::to_string(bits_width) +
                                " bits cannot hold " + spec.format.name() + " (" +
                                std::to_string(spec.format.width()) + " bits)");
  }
  if (in_size != out_size) {
    throw std::invalid_argument("input has " + std::to_string(in_size) + " elements, output " +
                                std::to_string(out_size));
  }
}

}  // namespace

template <class In, class Bits>
void round_to_bits(std::span<const In> in, std::span<Bits> out, const BulkRounding& spec) {
  check_spec(spec, static_cast<int>(8 * sizeof(Bits)), in.size(), out.size());
  parallel_chunks(in.size(), spec.threads, [&](size_t begin, size_t end) {
    round_range<In, Bits>(in.subspan(begin, end - begin), out.subspan(begin, end - begin), spec,
                          begin);
  });
}

template <class Bits, class Out>
void decode_bits(const Format& f, std::span<const Bits> in, std::span<Out> out) {
  if (in.size() != out.size()) throw std::invalid_argument("decode_bits: sizes differ");
  if constexpr (sizeof(Out) == sizeof(float)) {
    // Values of formats wider than float would round here; refuse rather than round twice.
    if (f.precision() > 24 || f.emin() - f.mantissa_bits < -149 || f.emax() > 127) {
      throw std::invalid_argument(f.name() + " values do not all fit in a float");
    }
  }
  for (size_t i = 0; i < in.size(); ++i) out[i] = static_cast<Out>(decode(f, in[i]));
}

template <class In>
void round_to_values(std::span<const In> in, std::span<In> out, const BulkRounding& spec) {
  check_spec(spec, 64, in.size(), out.size());
  if constexpr (std::is_same_v<In, float>) {
    if (spec.format.precision() > 24 || spec.format.emin() - spec.format.mantissa_bits < -149 ||
        spec.format.emax() > 127) {
      throw std::invalid_argument(spec.format.name() + " values do not all fit in a float");
    }
  }
  const Format& f = spec.format;
  parallel_chunks(in.size(), spec.threads, [&](size_t begin, size_t end) {
    uint64_t bits[kBlock];
    for (size_t start = begin; start < end; start += kBlock) {
      const size_t n = std::min(kBlock, end - start);
      round_range<In, uint64_t>(in.subspan(start, n), std::span<uint64_t>(bits, n), spec, start);
      for (size_t i = 0; i < n; ++i) out[start + i] = static_cast<In>(decode(f, bits[i]));
    }
  });
}

#define SIMPREC_INSTANTIATE_BITS(IN, BITS)                                    \
  template void round_to_bits<IN, BITS>(std::span<const IN>, std::span<BITS>, \
                                        const BulkRounding&);                 \
  template void decode_bits<BITS, IN>(const Format&, std::span<const BITS>, std::span<IN>);
SIMPREC_INSTANTIATE_BITS(float, uint8_t)
SIMPREC_INSTANTIATE_BITS(float, uint16_t)
SIMPREC_INSTANTIATE_BITS(float, uint32_t)
SIMPREC_INSTANTIATE_BITS(float, uint64_t)
SIMPREC_INSTANTIATE_BITS(double, uint8_t)
SIMPREC_INSTANTIATE_BITS(double, uint16_t)
SIMPREC_INSTANTIATE_BITS(double, uint32_t)
SIMPREC_INSTANTIATE_BITS(double, uint64_t)
#undef SIMPREC_INSTANTIATE_BITS
template void round_to_values<float>(std::span<const float>, std::span<float>, const BulkRounding&);
template void round_to_values<double>(std::span<const double>, std::span<double>,
                                      const BulkRounding&);

}  // namespace simprec
