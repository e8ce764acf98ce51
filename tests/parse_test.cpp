// parse_exact: decimal text whose correct rounding differs from rounding via double (the text
// lies a hair beside a midpoint that the double lands on), correct rounding in every mode
// against mpfr_strtofr at the format's precision, hex floats, inf/nan, and rejection of
// everything that is not one number.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "emulation/format.hpp"
#include "emulation/parse.hpp"
#include "emulation/round.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;

// The exact decimal expansion of a dyadic MPFR value (every binary fraction has one).
std::string exact_decimal(mpfr_srcptr x) {
  for (int digits = 40;; digits *= 2) {
    char* text = nullptr;
    mpfr_asprintf(&text, "%.*Re", digits, x);
    std::string s(text);
    mpfr_free_str(text);
    mpfr_t back;
    mpfr_init2(back, mpfr_get_prec(x) + 8);
    const int inexact = mpfr_set_str(back, s.c_str(), 10, MPFR_RNDN) != 0 || mpfr_cmp(back, x) != 0;
    mpfr_clear(back);
    if (!inexact) {
      // mpfr_set_str's ternary is not returned; check exactness by reading at a much higher
      // precision, where a non-exact decimal would differ from x.
      mpfr_t hi;
      mpfr_init2(hi, 20000);
      const int t = mpfr_strtofr(hi, s.c_str(), nullptr, 10, MPFR_RNDN);
      const bool exact = t == 0 && mpfr_cmp(hi, x) == 0;
      mpfr_clear(hi);
      if (exact) return s;
    }
    if (digits > 4000) throw std::logic_error("no exact decimal");
  }
}

uint64_t round_text(const Format& f, const std::string& text, RoundingMode m) {
  return round_to_format(f, parse_exact(text), Rounding{m});
}

// Expected result of rounding the number in `text` into f in every mode: MPFR reads the text
// correctly rounded at the format's precision, then the oracle's subnormal recipe.
void expect_text(oracle::Oracle& o, const std::string& text, uint64_t out[6]) {
  o.round_all(
      [&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_strtofr(r, text.c_str(), nullptr, 0, rnd); },
      out);
}

TEST(Parse, DecimalsThatRoundDifferentlyViaDouble) {
  int traps = 0;
  for (const Format& f :
       {formats::bf16, formats::fp16, formats::e4m3fn, formats::fp32, formats::fp64}) {
    oracle::Oracle o(f);
    const auto& s = o.spec();
    RoundingContext ctx(f);
    std::mt19937_64 rng(f.width());
    for (int i = 0; i < 300; ++i) {
      // A midpoint between two neighbours: normal (random binade), subnormal, or at the top.
      const uint64_t lo = i % 10 == 0   ? rng() % (uint64_t{1} << s.m)
                          : i % 10 == 1 ? s.max_bits
                                        : (rng() % s.max_bits);
      const double a = oracle::decode(s, lo);
      const int quantum = std::max(std::ilogb(a == 0 ? s.min_subnormal : a), s.emin) - s.m;
      mpfr_t x;
      mpfr_init2(x, 200);
      mpfr_set_d(x, a, MPFR_RNDN);
      mpfr_t half;
      mpfr_init2(half, 200);
      mpfr_set_ui_2exp(half, 1, quantum - 1, MPFR_RNDN);
      mpfr_add(x, x, half, MPFR_RNDN);  // the midpoint (exact)
      for (int dir : {1, -1}) {
        mpfr_t y;
        mpfr_init2(y, 200);
        mpfr_set_ui_2exp(half, 1, quantum - 1 - 70, MPFR_RNDN);  // far below double's ulp
        if (dir > 0)
          mpfr_add(y, x, half, MPFR_RNDN);
        else
          mpfr_sub(y, x, half, MPFR_RNDN);
        const std::string text = exact_decimal(y);
        mpfr_clear(y);
        uint64_t expected[6];
        expect_text(o, text, expected);
        for (int k = 0; k < 6; ++k) {
          ASSERT_EQ(round_text(f, text, oracle::kModes[k]), expected[k])
              << f.name() << " " << oracle::mode_name(oracle::kModes[k]) << " " << text;
        }
        const uint64_t via_double = ctx.round(std::strtod(text.c_str(), nullptr));
        if (f.precision() < 53 && via_double != expected[0]) ++traps;
      }
      mpfr_clear(x);
      mpfr_clear(half);
    }
  }
  EXPECT_GT(traps, 500);  // most constructed cases really are traps for rounding via double
}

TEST(Parse, RandomDecimalsEveryMode) {
  std::mt19937_64 rng(8);
  for (const Format& f :
       {formats::bf16, formats::fp16, formats::e5m2, formats::e4m3fnuz, formats::fp64}) {
    oracle::Oracle o(f);
    for (int i = 0; i < 3000; ++i) {
      std::string text = (rng() & 1) ? "-" : "";
      const int digits = 1 + static_cast<int>(rng() % 25);
      for (int d = 0; d < digits; ++d) {
        text += static_cast<char>('0' + rng() % 10);
        if (d == 0) text += '.';
      }
      text += "e" + std::to_string(static_cast<int>(rng() % 700) - 350);
      uint64_t expected[6];
      expect_text(o, text, expected);
      for (int k = 0; k < 6; ++k) {
        ASSERT_EQ(round_text(f, text, oracle::kModes[k]), expected[k])
            << f.name() << " " << oracle::mode_name(oracle::kModes[k]) << " " << text;
      }
    }
  }
}

TEST(Parse, HalfOfTheSmallestDoubleSubnormal) {
  // 2^-1075 exactly is the tie between 0 and the smallest subnormal double; one more digit
  // (well below any double) decides it.
  mpfr_t x;
  mpfr_init2(x, 100);
  mpfr_set_ui_2exp(x, 1, -1075, MPFR_RNDN);
  const std::string tie = exact_decimal(x);
  mpfr_clear(x);
  EXPECT_EQ(round_text(formats::fp64, tie, RoundingMode::kNearestEven), 0u);
  EXPECT_EQ(round_text(formats::fp64, tie, RoundingMode::kNearestAway), 1u);
  const auto e = tie.find('e');
  const std::string above = tie.substr(0, e) + "0000001" + tie.substr(e);
  EXPECT_EQ(round_text(formats::fp64, above, RoundingMode::kNearestEven), 1u);
}

TEST(Parse, HexFloats) {
  EXPECT_EQ(round_text(formats::fp64, "0x1.8p-3", RoundingMode::kNearestEven),
            std::bit_cast<uint64_t>(0.1875));
  EXPECT_EQ(round_text(formats::fp32, "-0X1.FFFFFEP+127", RoundingMode::kNearestEven), 0xff7fffffu);
  EXPECT_EQ(round_text(formats::fp64, "0x10", RoundingMode::kNearestEven),
            std::bit_cast<uint64_t>(16.0));
  EXPECT_EQ(round_text(formats::bf16, "0x1.01p0", RoundingMode::kNearestEven),
            0x3f80u);  // tie: even
  EXPECT_EQ(round_text(formats::bf16, "0x1.0100000000000000000001p0", RoundingMode::kNearestEven),
            0x3f81u);
  // Hex digits that happen to spell "0b" are hex digits, not a binary prefix.
  EXPECT_EQ(round_text(formats::fp64, "0x0b", RoundingMode::kNearestEven),
            std::bit_cast<uint64_t>(11.0));
  EXPECT_EQ(round_text(formats::fp64, "0x1.0bp3", RoundingMode::kNearestEven),
            std::bit_cast<uint64_t>(8.34375));
  EXPECT_EQ(round_text(formats::fp64, "0x1.b0bp0", RoundingMode::kNearestEven),
            std::bit_cast<uint64_t>(0x1.b0bp0));
}

TEST(Parse, InfinityNanBlanksAndExtremes) {
  EXPECT_EQ(parse_exact("inf").kind, Unrounded::Kind::kInfinity);
  EXPECT_FALSE(parse_exact("inf").negative);
  EXPECT_EQ(parse_exact("-inf").kind, Unrounded::Kind::kInfinity);
  EXPECT_TRUE(parse_exact("-inf").negative);
  EXPECT_EQ(parse_exact("nan").kind, Unrounded::Kind::kNan);
  EXPECT_EQ(parse_exact("  \t1.5\n ").kind, Unrounded::Kind::kFinite);
  EXPECT_EQ(round_text(formats::fp16, " 1.5 ", RoundingMode::kNearestEven), 0x3e00u);
  EXPECT_EQ(round_text(formats::fp16, "-0", RoundingMode::kNearestEven), 0x8000u);
  EXPECT_EQ(round_text(formats::e4m3fn, "inf", RoundingMode::kNearestEven), 0x7fu);
  EXPECT_EQ(round_text(formats::fp64, "1e400", RoundingMode::kNearestEven), 0x7ff0000000000000u);
  EXPECT_EQ(round_text(formats::fp64, "1e400", RoundingMode::kTowardZero), 0x7fefffffffffffffu);
  EXPECT_EQ(round_text(formats::fp64, "1e-400", RoundingMode::kNearestEven), 0u);
  EXPECT_EQ(round_text(formats::fp64, "1e-400", RoundingMode::kUp), 1u);
  EXPECT_EQ(round_text(formats::fp64, "-1e-99999999999", RoundingMode::kDown), 0x8000000000000001u);
  EXPECT_EQ(round_text(formats::fp64, "1e99999999999", RoundingMode::kNearestEven),
            0x7ff0000000000000u);
}

TEST(Parse, RejectsGarbage) {
  for (const char* bad : {"", "   ", "abc", "1.5x", "1e", "--1", "0x", "1 2", "@inf@", "0b101",
                          "-0b1", "1,5", "+", "e5", ".", "0x1p", "1.5 junk", "nan nan", "infx"}) {
    EXPECT_THROW(parse_exact(bad), std::invalid_argument) << "'" << bad << "'";
  }
}

}  // namespace
