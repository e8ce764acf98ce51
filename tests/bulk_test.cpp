// The bulk API against the scalar kernel: round_to_bits / round_to_values / decode_bits on
// random and special float and double inputs, every mode including sr and rnr (element i uses
// random index first_index + i), and identical output for 1, 2 and 8 threads on array lengths
// that are not multiples of the internal block or chunk sizes.
#include <gtest/gtest.h>

#include "tests/format_support.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "emulation/bulk.hpp"
#include "emulation/round.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;

using simprec::testing::with;

const std::vector<Format>& bulk_formats() {
  static const std::vector<Format> f = {
      formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2, formats::e4m3fnuz,
      formats::e5m2fnuz, formats::tf32, formats::fp32, formats::fp64, parse_format("e3m2"),
      parse_format("e6m9"), with(formats::e4m3fn, OverflowPolicy::kSaturate),
      with(formats::bf16, OverflowPolicy::kInfinity, SubnormalPolicy::kFlush),
      with(formats::e5m2, OverflowPolicy::kSaturate, SubnormalPolicy::kFlush),
      // wider than a float lane (33 bits) yet inside float's exponent range: a valid format
      Format{10, 22, 127, SpecialEncoding::kIeee, OverflowPolicy::kInfinity,
             SubnormalPolicy::kKeep},
      Format{8, 22, 127, SpecialEncoding::kIeee, OverflowPolicy::kInfinity,
             SubnormalPolicy::kFlush}};
  return f;
}

template <class T>
std::vector<T> test_inputs(size_t n, uint64_t seed) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  std::mt19937_64 rng(seed);
  std::vector<T> v = {T(0),
                      -T(0),
                      T(1),
                      -T(1),
                      std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity(),
                      std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::denorm_min(),
                      -std::numeric_limits<T>::denorm_min(),
                      std::numeric_limits<T>::min(),
                      std::numeric_limits<T>::max(),
                      T(448),
                      T(464),
                      T(465),
                      T(480),
                      T(57344),
                      T(61440),
                      T(65504),
                      T(65520),
                      T(240),
                      T(248),
                      T(0x1p-9),
                      T(0x1p-10),
                      T(0x1p-16),
                      T(0x1p-17),
                      T(0x1p-24),
                      T(0x1p-25),
                      T(0x1p-133),
                      T(0x1p-134),
                      T(0x1.fep127),
                      T(0x1.ffp127)};
  while (v.size() < n) {
    const uint64_t r = rng();
    if (r % 3 == 0) {
      v.push_back(std::bit_cast<T>(static_cast<U>(rng())));  // any bits
    } else {
      // Magnitudes from 2^-140 to 2^130 with random significands (most in the formats' ranges).
      const int e = static_cast<int>(rng() % 271) - 140;
      const T m = static_cast<T>(1 + static_cast<double>(rng() >> 11) * 0x1p-53);
      v.push_back(std::ldexp(m, e) * ((r & 8) ? -1 : 1));
    }
  }
  return v;
}

template <class T>
void check_against_scalar(const Format& f, const Rounding& r, const std::vector<T>& in,
                          unsigned threads, oracle::Mismatches& bad) {
  const BulkRounding spec{f, r, RandomStream{1234, 7}, 1000, threads};
  std::vector<uint64_t> out(in.size(), 0xdeadbeef);
  round_to_bits<T, uint64_t>(in, out, spec);
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t rnd =
        uses_random_bits(r.mode) ? random_bits(spec.random, spec.first_index + i) : 0;
    const uint64_t want =
        round_to_format(f, unrounded_from_double(static_cast<double>(in[i])), r, rnd);
    if (out[i] != want) {
      bad.add(f.name() + " " + oracle::mode_name(r.mode) + " sr_bits=" + std::to_string(r.sr_bits) +
              " threads=" + std::to_string(threads) + " i=" + std::to_string(i) +
              " x=" + std::to_string(static_cast<double>(in[i])) + ": scalar " + oracle::hex(want) +
              " bulk " + oracle::hex(out[i]));
    }
  }
}

TEST(Bulk, MatchesScalarKernelFloatAndDoubleEveryMode) {
  const auto fin = test_inputs<float>(20000, 1);
  const auto din = test_inputs<double>(20000, 2);
  oracle::Mismatches bad;
  for (const Format& f : bulk_formats()) {
    for (RoundingMode m : kAllRoundingModes) {
      for (int sr_bits : {32, 13, 1}) {
        if (sr_bits != 32 && m != RoundingMode::kStochastic) continue;
        check_against_scalar(f, Rounding{m, sr_bits}, fin, 1, bad);
        check_against_scalar(f, Rounding{m, sr_bits}, din, 1, bad);
      }
    }
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// Lengths just past the point where the work is split over threads (64 Ki elements per
// thread), not multiples of anything: every element must be written, and the same way.
TEST(Bulk, IdenticalForOneTwoAndEightThreads) {
  oracle::Mismatches bad;
  for (size_t n : {size_t{2} * 65536 + 1, size_t{8} * 65536 + 5, size_t{3} * 65536 + 1029}) {
    const auto in = test_inputs<float>(n, n);
    for (const Format& f : {formats::bf16, formats::e4m3fn, formats::fp64}) {
      for (RoundingMode m : {RoundingMode::kNearestEven, RoundingMode::kStochastic,
                             RoundingMode::kNearestRandomTies}) {
        std::vector<std::vector<uint16_t>> outs;
        std::vector<std::vector<float>> values;
        for (unsigned threads : {1u, 2u, 8u}) {
          const BulkRounding spec{f, Rounding{m}, RandomStream{42, 3}, 5, threads};
          if (f.width() <= 16) {
            std::vector<uint16_t> out(n, 0xbeef);
            round_to_bits<float, uint16_t>(in, out, spec);
            outs.push_back(out);
          }
          if (f.precision() <= 24 && f.emax() <= 127) {
            std::vector<float> vals(n, -1.0f);
            round_to_values<float>(in, vals, spec);
            values.push_back(vals);
          }
          check_against_scalar(f, Rounding{m}, in, threads, bad);
        }
        for (size_t k = 1; k < outs.size(); ++k) {
          EXPECT_TRUE(outs[k] == outs[0])
              << f.name() << " bits differ between thread counts, n=" << n;
        }
        for (size_t k = 1; k < values.size(); ++k) {
          EXPECT_EQ(0, std::memcmp(values[k].data(), values[0].data(), n * sizeof(float)))
              << f.name() << " values differ between thread counts, n=" << n;
        }
      }
    }
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

TEST(Bulk, RoundToValuesAndDecodeBitsMatchScalar) {
  const auto fin = test_inputs<float>(5000, 3);
  const auto din = test_inputs<double>(5000, 4);
  for (const Format& f : {formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2fnuz}) {
    for (RoundingMode m : kAllRoundingModes) {
      const BulkRounding spec{f, Rounding{m}, RandomStream{9, 9}, 77, 1};
      std::vector<float> fv(fin.size());
      round_to_values<float>(fin, fv, spec);
      std::vector<double> dv(din.size());
      round_to_values<double>(din, dv, spec);
      std::vector<uint32_t> bits(fin.size());
      round_to_bits<float, uint32_t>(fin, bits, spec);
      std::vector<float> decoded(fin.size());
      decode_bits<uint32_t, float>(f, bits, decoded);
      for (size_t i = 0; i < fin.size(); ++i) {
        const uint32_t rnd = uses_random_bits(m) ? random_bits(spec.random, 77 + i) : 0;
        const double want_f =
            decode(f, round_to_format(f, unrounded_from_double(fin[i]), Rounding{m}, rnd));
        const double want_d =
            decode(f, round_to_format(f, unrounded_from_double(din[i]), Rounding{m}, rnd));
        ASSERT_EQ(std::bit_cast<uint32_t>(fv[i]),
                  std::bit_cast<uint32_t>(static_cast<float>(want_f)))
            << f.name() << " " << oracle::mode_name(m) << " i=" << i;
        ASSERT_EQ(std::bit_cast<uint32_t>(decoded[i]),
                  std::bit_cast<uint32_t>(static_cast<float>(want_f)));
        ASSERT_EQ(std::bit_cast<uint64_t>(dv[i]), std::bit_cast<uint64_t>(want_d))
            << f.name() << " " << oracle::mode_name(m) << " i=" << i;
      }
    }
  }
}

// round_to_values against the scalar kernel's encoding, decoded, for every format whose values
// the input type holds, every mode (sr with several sr_bits), out of place and in place.
template <class T>
void check_values_against_scalar(const Format& f, const Rounding& r, const std::vector<T>& in,
                                 oracle::Mismatches& bad) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const BulkRounding spec{f, r, RandomStream{77, 5}, 3, 1};
  std::vector<T> out(in.size(), T(-7));
  round_to_values<T>(in, out, spec);
  std::vector<T> in_place = in;
  round_to_values<T>(in_place, in_place, spec);
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t rnd = uses_random_bits(r.mode) ? random_bits(spec.random, 3 + i) : 0;
    const T want =
        static_cast<T>(decode(f, round_to_format(f, unrounded_from_double(in[i]), r, rnd)));
    for (const T got : {out[i], in_place[i]}) {
      if (std::bit_cast<U>(got) != std::bit_cast<U>(want)) {
        bad.add(f.name() + " " + oracle::mode_name(r.mode) + " sr_bits=" +
                std::to_string(r.sr_bits) + " " + (sizeof(T) == 4 ? "float" : "double") +
                " i=" + std::to_string(i) + " x=" + oracle::hex(std::bit_cast<U>(in[i])) +
                ": scalar " + oracle::hex(std::bit_cast<U>(want)) + " bulk " +
                oracle::hex(std::bit_cast<U>(got)) + (got == out[i] ? "" : " (in place)"));
      }
    }
  }
}

bool values_fit_float(const Format& f) {
  return f.precision() <= 24 && f.emin() - f.mantissa_bits >= -149 && f.emax() <= 127;
}

TEST(BulkValues, MatchScalarKernelEveryFormatAndMode) {
  const auto fin = test_inputs<float>(65536, 11);
  const auto din = test_inputs<double>(65536, 12);
  std::vector<Format> targets = bulk_formats();
  // Targets whose subnormals lie below float's normal range, and one with a larger bias.
  targets.push_back(
      Format{8, 3, 130, SpecialEncoding::kIeee, OverflowPolicy::kInfinity, SubnormalPolicy::kKeep});
  targets.push_back(Format{6, 4, 40, SpecialEncoding::kFiniteNan, OverflowPolicy::kSaturate,
                           SubnormalPolicy::kKeep});
  oracle::Mismatches bad;
  size_t float_formats = 0;
  for (const Format& f : targets) {
    const bool to_float = values_fit_float(f);
    float_formats += to_float;
    for (RoundingMode m : kAllRoundingModes) {
      for (int sr_bits : {32, 13, 1}) {
        if (sr_bits != 32 && m != RoundingMode::kStochastic) continue;
        if (to_float) check_values_against_scalar(f, Rounding{m, sr_bits}, fin, bad);
        check_values_against_scalar(f, Rounding{m, sr_bits}, din, bad);
      }
    }
  }
  EXPECT_GE(float_formats, 14u);  // the list above, so that float values are really covered
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// Blocks in which values overflow but no input is infinite or NaN (the first, unmarked pass
// over a block must find overflows on its own): the floats just below infinity, both signs,
// against the scalar kernel in every mode, encodings and values.
TEST(Bulk, OverflowWithoutSpecialsInTheBlock) {
  std::vector<float> in;
  for (uint32_t bits = 0x7f7e0000u; bits < 0x7f800000u; bits += 3) {
    for (uint32_t sign : {0u, 0x80000000u}) in.push_back(std::bit_cast<float>(bits | sign));
  }
  for (uint32_t bits : {0x7f7f7fffu, 0x7f7f8000u, 0x7f7fefffu, 0x7f7ff000u, 0x7f7fffffu}) {
    in.push_back(std::bit_cast<float>(bits));
  }
  oracle::Mismatches bad;
  for (const Format& f : {formats::bf16, formats::tf32, formats::fp16, formats::e5m2,
                          with(formats::bf16, OverflowPolicy::kSaturate)}) {
    for (RoundingMode m : kAllRoundingModes) {
      check_against_scalar(f, Rounding{m}, in, 1, bad);
      if (values_fit_float(f)) check_values_against_scalar(f, Rounding{m}, in, bad);
    }
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

TEST(Bulk, InPlaceRoundToValues) {
  auto v = test_inputs<double>(3000, 5);
  const auto copy = v;
  const BulkRounding spec{formats::e5m2, {}, {}, 0, 1};
  round_to_values<double>(v, v, spec);
  for (size_t i = 0; i < v.size(); ++i) {
    const double want =
        decode(formats::e5m2, round_to_format(formats::e5m2, unrounded_from_double(copy[i]), {}));
    ASSERT_EQ(std::bit_cast<uint64_t>(v[i]), std::bit_cast<uint64_t>(want));
  }
}

TEST(Bulk, RejectsBadArguments) {
  std::vector<float> in(4, 1.0f);
  std::vector<uint8_t> small(4);
  std::vector<uint16_t> out3(3);
  EXPECT_THROW(
      (round_to_bits<float, uint8_t>(in, small, BulkRounding{formats::bf16, {}, {}, 0, 0})),
      std::invalid_argument);
  EXPECT_THROW(
      (round_to_bits<float, uint16_t>(in, out3, BulkRounding{formats::bf16, {}, {}, 0, 0})),
      std::invalid_argument);
  std::vector<uint16_t> out(4);
  EXPECT_THROW(
      (round_to_bits<float, uint16_t>(
          in, out, BulkRounding{formats::bf16, Rounding{RoundingMode::kStochastic, 0}, {}, 0, 0})),
      std::invalid_argument);
  std::vector<float> vals(4);
  EXPECT_THROW((round_to_values<float>(in, vals, BulkRounding{formats::fp64, {}, {}, 0, 0})),
               std::invalid_argument);
}

}  // namespace

namespace {
// The fast per-binade reference used by bulk_heavy_test, checked against the MPFR oracle on
// whole binades sampled at random positions (and their first and last elements).
TEST(BulkReference, FloatBinadeReferenceAgreesWithMpfr) {
  using namespace simprec;
  std::vector<uint16_t> want(size_t{1} << 23);
  std::mt19937_64 rng(6);
  oracle::Mismatches bad;
  for (const Format& f : {formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2}) {
    oracle::Oracle o(f);
    mpfr_t v;
    mpfr_init2(v, 64);
    for (int field = 0; field < 255; ++field) {
      for (bool negative : {false, true}) {
        for (RoundingMode m : oracle::kModes) {
          for (int j = 0; j < 40; ++j) {
            const uint32_t i = j == 0   ? 0
                               : j == 1 ? (1u << 23) - 1
                                        : static_cast<uint32_t>(rng() % (1u << 23));
            oracle::float_binade_reference(o.spec(), m, negative, field, want.data() + i, i, 1);
            const float x =
                std::bit_cast<float>((negative ? 0x80000000u : 0u) | (uint32_t(field) << 23) | i);
            mpfr_set_d(v, x, MPFR_RNDN);
            const uint64_t expected =
                o.round(m, [&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, v, rnd); });
            if (want[i] != expected) {
              bad.add(f.name() + " " + oracle::mode_name(m) +
                      " x=" + oracle::hex(std::bit_cast<uint32_t>(x)) + ": mpfr " +
                      oracle::hex(expected) + " reference " + oracle::hex(want[i]));
            }
          }
        }
      }
    }
    mpfr_clear(v);
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}
}  // namespace

namespace {

// Outputs of 4 MiB or more are written with streaming stores from blocks aligned to the
// output's cache lines: every element against the scalar kernel, encodings and values, at
// several output offsets, with specials (NaN, infinities, overflow, subnormals, zeros)
// sprinkled through the array.
TEST(BulkStreaming, LargeMisalignedArraysMatchTheScalarKernel) {
  constexpr size_t kCount = (size_t{1} << 21) + 77;  // > 4 MiB of output, not a block multiple
  std::mt19937_64 rng(2024);
  std::vector<float> in(kCount);
  for (size_t i = 0; i < kCount; ++i) in[i] = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  const uint32_t specials[] = {0x7f800000u, 0xff800000u, 0x7fc00001u, 0x7f7fffffu, 0xff7f8000u,
                               0x00000001u, 0x80400000u, 0x00000000u, 0x80000000u, 0x7f7f7fffu};
  for (size_t i = 0; i < kCount; i += 4099) in[i] = std::bit_cast<float>(specials[(i / 4099) % 10]);
  const simprec::Rounding sr{simprec::RoundingMode::kStochastic};
  for (const auto& [format, rounding] : {std::pair{simprec::formats::bf16, simprec::Rounding{}},
                                         std::pair{simprec::formats::e5m2, sr}}) {
    const simprec::BulkRounding spec{format, rounding, {5, 6}, 0, 1};
    // Copies of the bindings: clang 14 cannot capture a structured binding.
    const auto want_bits = [&, f = format, r = rounding](size_t i) {
      const uint32_t rnd = uses_random_bits(r.mode) ? random_bits(spec.random, i) : 0;
      return simprec::round_to_format(f, simprec::unrounded_from_float(in[i]), r, rnd);
    };
    std::vector<uint16_t> bits(kCount + 16);
    std::vector<float> values(kCount + 16);
    for (size_t offset : {0, 1, 3, 8, 15}) {
      const std::span<uint16_t> out(bits.data() + offset, kCount);
      simprec::round_to_bits<float, uint16_t>(in, out, spec);
      const std::span<float> out_values(values.data() + offset, kCount);
      simprec::round_to_values<float>(in, out_values, spec);
      size_t bad_bits = 0, bad_values = 0;
      for (size_t i = 0; i < kCount; ++i) {
        const uint64_t want = want_bits(i);
        bad_bits += out[i] != want;
        bad_values += std::bit_cast<uint32_t>(out_values[i]) !=
                      std::bit_cast<uint32_t>(static_cast<float>(simprec::decode(format, want)));
      }
      EXPECT_EQ(bad_bits, 0u) << format.name() << " encodings, output offset " << offset;
      EXPECT_EQ(bad_values, 0u) << format.name() << " values, output offset " << offset;
    }
  }
}

}  // namespace
