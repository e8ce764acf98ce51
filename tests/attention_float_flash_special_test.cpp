// The float fast path of flash attention (lib/attention/float_flash.hpp) against the
// site-by-site path on special values: softmax scales that overflow the scores or their fp32
// forms (1e308, 3e38, 1e39, the largest float, infinity) or underflow them (1e-45, 1e-320,
// 0), and inputs holding a value beyond fp32's range (infinite once rounded at `input`), values
// whose products overflow fp32 or values whose products underflow it. The site-by-site path is the
// reference; the fast path must compute the problem itself (it declines only inputs that are not
// floats) and give its bits. Registered once per CPU level (tests/CMakeLists.txt): each level's
// clone of the fast path is checked.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "emulation/cpu_level.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/float_flash.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string hex(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(std::bit_cast<uint64_t>(x)));
  return text;
}

// The same bits, -0 and +0 told apart; a NaN's sign and payload are not modelled (the engine's
// own NaNs carry the x86 default NaN or whatever operand the compiler put first), so any NaN
// matches any NaN. The first difference is reported with its index and both encodings.
void expect_same(const std::vector<double>& fast, const std::vector<double>& general,
                 const std::string& what) {
  ASSERT_EQ(fast.size(), general.size()) << what;
  size_t differ = 0, first = 0;
  for (size_t i = 0; i < fast.size(); ++i) {
    const bool same = std::bit_cast<uint64_t>(fast[i]) == std::bit_cast<uint64_t>(general[i]) ||
                      (std::isnan(fast[i]) && std::isnan(general[i]));
    if (!same && differ++ == 0) first = i;
  }
  EXPECT_EQ(differ, 0u) << what << ": first at " << first << ": fast " << hex(fast[first])
                        << " engine " << hex(general[first]);
}

void expect_same_outputs(const AttentionOutputs& fast, const AttentionOutputs& general,
                         const std::string& what) {
  expect_same(fast.o, general.o, what + " O");
  expect_same(fast.lse, general.lse, what + " LSE");
  expect_same(fast.dq, general.dq, what + " dQ");
  expect_same(fast.dk, general.dk, what + " dK");
  expect_same(fast.dv, general.dv, what + " dV");
  expect_same(fast.delta, general.delta, what + " D");
}

// How many of x are NaN or infinite (so that a case is known to reach special values).
size_t non_finite(const std::vector<double>& x) {
  size_t n = 0;
  for (const double v : x) n += !std::isfinite(v);
  return n;
}

struct Numerics {
  std::string name;
  AttentionConfig config;
};

// The three configurations the fast path computes: the fp32 preset (at bf16), and the fa2
// preset at bf16 with its tensor-core model and with one fmaf per term.
std::vector<Numerics> fast_path_numerics() {
  AttentionConfig fa2_fmaf = make_preset("fa2");
  for (const char* site : {"s", "pv_acc", "dp", "dq_acc", "dk_acc", "dv_acc"}) {
    apply_override(fa2_fmaf, std::string(site) + "=fp32:rne:sequential");
  }
  return {{"fp32", make_preset("fp32")}, {"fa2", make_preset("fa2")}, {"fa2 fmaf", fa2_fmaf}};
}

// Forward and backward, causal or not, with tiles smaller than the sequence (so that the online
// softmax rescales): the fast path, which must take every problem, against the site-by-site
// path, and run_attention as users call it. Adds the number of non-finite values the engine gave in
// O to `special`.
void expect_fast_path_equals_engine(const AttentionInputs& in, AttentionConfig c,
                                    const std::string& what, size_t& special) {
  for (const bool causal : {false, true}) {
    c.causal = causal;
    c.block_rows = 8;
    c.block_cols = 8;
    c.threads = 1;
    const std::string label = what + (causal ? " causal" : "");
    ASSERT_TRUE(float_flash_applies(c)) << label;
    const AttentionInputs rounded = round_inputs(in, c);
    const AttentionShape& s = in.shape;
    AttentionOutputs fast;
    fast.o.assign(s.problems() * s.nq * s.dv, 0.0);
    fast.lse.assign(s.problems() * s.nq, 0.0);
    fast.dq.assign(s.problems() * s.nq * s.d, 0.0);
    fast.dk.assign(s.problems() * s.nk * s.d, 0.0);
    fast.dv.assign(s.problems() * s.nk * s.dv, 0.0);
    fast.delta.assign(s.problems() * s.nq, 0.0);
    for (int64_t p = 0; p < s.problems(); ++p) {
      ASSERT_TRUE(run_float_flash(c, rounded, fast, p)) << label << " problem " << p;
    }
    const AttentionOutputs general = run_attention(in, c, FastPath::kSiteBySite);
    expect_same_outputs(fast, general, label);
    expect_same_outputs(run_attention(in, c), general, label + " run_attention");
    special += non_finite(general.o);
  }
}

AttentionInputs normal_inputs(uint64_t seed) {
  return inputs::generate("normal", {2, 1, 20, 20, 8, 8}, seed, true);
}

std::string level() {
  return std::string(cpu_level_name(cpu_level()));
}

TEST(FloatFlashSpecialValues, ScalesThatOverflowOrUnderflow) {
  const double scales[] = {
      1e308, 3e38,  1e39,   static_cast<double>(std::numeric_limits<float>::max()),
      kInf,  1e-45, 1e-320, 0.0};
  for (const Numerics& n : fast_path_numerics()) {
    size_t special = 0;
    for (const double scale : scales) {
      AttentionConfig c = n.config;
      c.scale = scale;
      const std::string what = level() + " " + n.name + " scale " + hex(scale);
      SCOPED_TRACE(what);
      expect_fast_path_equals_engine(normal_inputs(5), c, what, special);
    }
    // The cases reach special values (else they would test nothing special).
    EXPECT_GT(special, 0u) << n.name;
  }
}

TEST(FloatFlashSpecialValues, InputsBeyondFp32HugeAndTinyValues) {
  struct Change {
    std::string name;
    std::vector<double> AttentionInputs::*tensor;
    size_t index;
    double value;  // placed at index; 0: every value multiplied by `factor` instead
    double factor;
  };
  const Change changes[] = {
      // Q of order 1e19: scores overflow fp32 (and bf16 inputs stay finite).
      {"Q huge", &AttentionInputs::q, 0, 0, 1e19},
      // Finite doubles beyond fp32's range: infinite once rounded at `input`.
      {"K 1e39", &AttentionInputs::k, 9, 1e39, 0},
      {"V -1e39", &AttentionInputs::v, 77, -1e39, 0},
      {"dO 1e39", &AttentionInputs::d_out, 40, 1e39, 0},
      // K of order 1e-30: scores are subnormal or zero.
      {"K tiny", &AttentionInputs::k, 0, 0, 1e-30},
      {"V huge", &AttentionInputs::v, 0, 0, 3e37},
  };
  for (const Numerics& n : fast_path_numerics()) {
    size_t special = 0;
    for (const Change& change : changes) {
      AttentionInputs in = normal_inputs(8);
      std::vector<double>& x = in.*change.tensor;
      if (change.factor != 0) {
        for (double& v : x) v *= change.factor;
      } else {
        x[change.index] = change.value;
      }
      const std::string what = level() + " " + n.name + " " + change.name;
      SCOPED_TRACE(what);
      expect_fast_path_equals_engine(in, n.config, what, special);
    }
    EXPECT_GT(special, 0u) << n.name;
  }
}

}  // namespace
}  // namespace simprec::attention
