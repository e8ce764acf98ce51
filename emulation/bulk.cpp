#include "emulation/bulk.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "emulation/bulk_block.hpp"
#include "emulation/cpu_level.hpp"
#include "emulation/parallel.hpp"
#include "emulation/round.hpp"

namespace simprec {
namespace {

using bulk_detail::fast_path_applies;
using bulk_detail::Plan;
using bulk_detail::round_block;
using bulk_detail::same_exponent_range;

constexpr size_t kBlock = 1024;
constexpr size_t kMinPerThread = size_t{1} << 16;
// Outputs at least this large are written around the cache (streaming stores): the store then
// costs no read of the destination, which is most of what separates a rounding loop from the
// memory system's limit. Smaller ones may be read again soon and stay in the cache.
constexpr size_t kStreamBytes = size_t{4} << 20;
constexpr size_t kLine = 64;

// Copies a block staged in the cache to its destination with streaming stores; `dst` is
// 64-byte aligned and the caller fences once after the last block. The clones for AVX2 and
// AVX-512 store 32 bytes at a time: 16-byte stores took bf16 values out 15% longer (the
// streaming buffers fill in twice as many stores), 64-byte ones gave nothing more.
template <CpuLevel kLevel>
void stream_copy(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  }
#endif
  std::memcpy(d + i, s + i, bytes - i);
}
#if SIMPREC_CPU_CLONES || defined(__AVX2__)
template <>
[[SIMPREC_TARGET_V3]] void stream_copy<CpuLevel::kV3>(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
  }
  stream_copy<CpuLevel::kBaseline>(d + i, s + i, bytes - i);
}
template <>
[[SIMPREC_TARGET_V4]] void stream_copy<CpuLevel::kV4>(void* dst, const void* src, size_t bytes) {
  stream_copy<CpuLevel::kV3>(dst, src, bytes);
}
#endif

void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// What the scalar kernel gives for one element: the encoding, or its value as In.
template <class In, class Out>
Out scalar_result(const Format& f, In x, const Rounding& r, uint32_t random) {
  const uint64_t bits = round_to_format(f, unrounded_from_double(x), r, random);
  if constexpr (std::is_same_v<In, Out>) {
    return static_cast<In>(decode(f, bits));
  } else {
    return static_cast<Out>(bits);
  }
}

// Rounds in[i] into out[i] (encodings, or values when Out is In); element i takes random index
// spec.first_index + offset + i.
template <class In, class Out, CpuLevel kLevel = CpuLevel::kBaseline>
void round_range(std::span<const In> in, std::span<Out> out, const BulkRounding& spec,
                 uint64_t offset) {
  const Format& f = spec.format;
  const Rounding& r = spec.rounding;
  const bool random = uses_random_bits(r.mode);
  alignas(kLine) uint32_t rnd[kBlock];
  alignas(kLine) Out staged[kBlock];
  uint8_t fix[kBlock];
  // Values of a target whose range exceeds In's (a custom bias) are the scalar kernel's.
  const bool fast = fast_path_applies<In>(f) &&
                    (!std::is_same_v<In, Out> || f.emax() <= bulk_detail::IeeeLayout<In>::kBias);
  const Plan<In> plan(f, r.mode);
  const bool same_range = same_exponent_range<In>(f);
  const auto out_address = reinterpret_cast<uintptr_t>(out.data());
  const bool stream = in.size() * sizeof(Out) >= kStreamBytes && out_address % sizeof(Out) == 0;
  // Rounding in place: the kernel reads each block twice (and the fix-ups read it again), so
  // the block is rounded into the cache first.
  const bool stage = stream || static_cast<const void*>(in.data()) == out.data();
  // With streaming stores, blocks start on cache lines of the output (a line written partly by
  // streaming and partly by ordinary stores is slow); the elements before the first line form
  // a block of their own.
  const size_t head = stream ? ((kLine - out_address % kLine) % kLine) / sizeof(Out) : 0;
  for (size_t start = 0; start < in.size();) {
    const size_t n = std::min(start == 0 && head > 0 ? head : kBlock, in.size() - start);
    if (random) fill_random_bits(spec.random, spec.first_index + offset + start, rnd, n);
    const In* src = in.data() + start;
    Out* dst = stage ? staged : out.data() + start;
    if (!fast) {
      for (size_t i = 0; i < n; ++i) {
        dst[i] = scalar_result<In, Out>(f, src[i], r, random ? rnd[i] : 0);
      }
    } else {
      bool any_fix = false;
      switch (r.mode) {
#define SIMPREC_BULK_CASE(MODE)                                                            \
  case MODE:                                                                               \
    /* First pass without marking: specials are rare, so only a block that has one is */   \
    /* rounded again with the marks the fix-up loop needs. */                              \
    if (same_range) {                                                                      \
      any_fix = round_block<MODE, true, false>(plan, src, dst, fix, n, rnd, r.sr_bits) &&  \
                round_block<MODE, true, true>(plan, src, dst, fix, n, rnd, r.sr_bits);     \
    } else {                                                                               \
      any_fix = round_block<MODE, false, false>(plan, src, dst, fix, n, rnd, r.sr_bits) && \
                round_block<MODE, false, true>(plan, src, dst, fix, n, rnd, r.sr_bits);    \
    }                                                                                      \
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
      if (any_fix) {
        for (size_t i = 0; i < n; ++i) {
          if (fix[i]) dst[i] = scalar_result<In, Out>(f, src[i], r, random ? rnd[i] : 0);
        }
      }
    }
    if (stream && (start > 0 || head == 0)) {
      stream_copy<kLevel>(out.data() + start, staged, n * sizeof(Out));
    } else if (stage) {
      std::memcpy(out.data() + start, staged, n * sizeof(Out));
    }
    start += n;
  }
  if (stream) stream_fence();  // streamed data visible before the caller reads it
}

// round_range compiled for each x86-64 level (cpu_level.hpp), picked at run time.
template <class In, class Out>
[[SIMPREC_TARGET_V3]] void round_range_v3(std::span<const In> in, std::span<Out> out,
                                          const BulkRounding& spec, uint64_t offset) {
  round_range<In, Out, CpuLevel::kV3>(in, out, spec, offset);
}
template <class In, class Out>
[[SIMPREC_TARGET_V4]] void round_range_v4(std::span<const In> in, std::span<Out> out,
                                          const BulkRounding& spec, uint64_t offset) {
  round_range<In, Out, CpuLevel::kV4>(in, out, spec, offset);
}

template <class In, class Out>
void round_range_for_cpu(std::span<const In> in, std::span<Out> out, const BulkRounding& spec,
                         uint64_t offset) {
  for_this_cpu(&round_range<In, Out>, &round_range_v3<In, Out>, &round_range_v4<In, Out>)(
      in, out, spec, offset);
}

// Splits [0, n) into contiguous chunks (multiples of kBlock), one per thread.
template <class Fn>
void parallel_chunks(size_t n, unsigned threads, Fn&& fn) {
  const unsigned t = static_cast<unsigned>(
      std::min<size_t>(resolve_threads(threads), std::max<size_t>(1, n / kMinPerThread)));
  // ceil(n / t), rounded up to whole blocks: t chunks of this size cover all n elements.
  const size_t per = ((n + t - 1) / t + kBlock - 1) / kBlock * kBlock;
  parallel_for(t, t, [&](int64_t k) {
    const size_t begin = std::min(n, k * per), end = std::min(n, (k + 1) * per);
    if (begin < end || k == 0) fn(begin, end);
  });
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
    round_range_for_cpu<In, Bits>(in.subspan(begin, end - begin), out.subspan(begin, end - begin),
                                  spec, begin);
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
  parallel_chunks(in.size(), spec.threads, [&](size_t begin, size_t end) {
    round_range_for_cpu<In, In>(in.subspan(begin, end - begin), out.subspan(begin, end - begin),
                                spec, begin);
  });
}

size_t first_value_not_held(const Format& format, std::span<const float> values) {
  std::vector<float> back(values.size());
  round_to_values<float>(values, back, BulkRounding{format, Rounding{}, RandomStream{}, 0, 1});
  for (size_t i = 0; i < values.size(); ++i) {
    const bool held = values[i] != values[i]
                          ? back[i] != back[i]
                          : std::bit_cast<uint32_t>(back[i]) == std::bit_cast<uint32_t>(values[i]);
    if (!held) return i;
  }
  return values.size();
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
