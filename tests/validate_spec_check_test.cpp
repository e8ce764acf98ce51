// `simprec numerics` accepts and refuses exactly the specs `attention` and `validate` do: every
// spec below that a run refuses is refused by all three commands with the same reason (exit 2,
// nothing written), before any input is made; and every spec `numerics` accepts runs in both.
// The refused specs include those whose reason holds for every shape although a run meets it only
// with its shape: a tile=auto no dispatch fills, a block mask's tile condition on a given tile,
// tiled random bits that do not divide 32.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/cli_support.hpp"

namespace simprec::testing {
namespace {

struct Refused {
  const char* spec;
  const char* reason;  // a fragment of the error every command prints
};

constexpr Refused kRefused[] = {
    {"fa2,tile=auto",
     "tile=auto needs a dispatch (dispatch=torch-efficient or dispatch=torch-flash)"},
    {"fa2,algorithm=standard,tile=auto", "tile=auto needs a dispatch"},
    {"fa2,block_mask=diagonal-first,tile=64x48",
     "block_mask=diagonal-first: needs a tile that divides 128x128, not 64x48"},
    {"torch-flex,tile_rule=fixed,tile=48x64",
     "block_mask=diagonal-first: needs a tile that divides 128x128, not 48x64"},
    {"fa2,sr-p-tiled:8,sr-p:3",
     "tiled random bits at p_cast need a bit count that divides 32 (1, 2, 4, 8, 16, 32), not 3"},
    {"fp32,rescale=exp2-diff", "rescale=exp2-diff needs exp_impl="},
    {"fa2,p_cast=fp16", "takes bf16 operands, but p_cast rounds P to fp16"},
    {"fa2,qk_quant=e8m0", "format e8m0 has no sign"},
    {"fa2,tile=64x64,tile=32x32", "tile is given twice"},
    {"fa2,p_cast=bf16:xx", "unknown rounding mode 'xx'"},
    {"fa2,nosuch=1", "unknown site or option 'nosuch'"},
    {"nosuchpreset", "unknown preset 'nosuchpreset'"},
};

// Specs a run of some shape accepts: the tile comes from the shape (tile rule, dispatch, sram),
// so the tile conditions wait for it.
constexpr const char* kAccepted[] = {
    "fa2",
    "torch-flex",
    "torch-flex,tile=64x48",  // flex-sm90 replaces the tile
    "fa2,dispatch=torch-flash,tile=auto,block_mask=diagonal-first",
    "fa2,algorithm=standard,block_mask=diagonal-first,tile=64x48",  // no blocks to mask
    "fa2,sram=4096",
    "fa2,sr-p-tiled:8",
    "fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=64x32,rescale=natural-shift,lse_impl=shift-log",
};

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

CommandResult numerics(const std::string& spec) {
  return run_simprec("numerics " + quoted(spec));
}

CommandResult attention(const std::string& spec, const std::filesystem::path& out) {
  return run_simprec("attention --numerics " + quoted(spec) +
                     " --generate normal --shape 1,1,64,16 --out " + out.string());
}

CommandResult validate(const std::string& spec) {
  return run_simprec(std::string("validate --plugin ") + SIMPREC_TEST_ONLINE_SOFTMAX_PLUGIN +
                     " --kernel online_softmax_bf16 --generate normal --dim B=1 --dim H=1 "
                     "--dim Sq=64 --dim D=16 --model " +
                     quoted(spec));
}

TEST(SpecCheck, EveryCommandRefusesWhatARunRefuses) {
  for (const Refused& r : kRefused) {
    SCOPED_TRACE(r.spec);
    const CommandResult n = numerics(r.spec);
    EXPECT_EQ(n.exit_code, 2) << n.output;
    EXPECT_NE(n.output.find(r.reason), std::string::npos) << n.output;

    const std::filesystem::path out = fresh_dir("spec_check_attention");
    const CommandResult a = attention(r.spec, out / "run");
    EXPECT_EQ(a.exit_code, 2) << a.output;
    EXPECT_NE(a.output.find(r.reason), std::string::npos) << a.output;
    EXPECT_FALSE(std::filesystem::exists(out / "run")) << "attention wrote outputs";

    const CommandResult v = validate(r.spec);
    EXPECT_EQ(v.exit_code, 2) << v.output;
    EXPECT_NE(v.output.find(r.reason), std::string::npos) << v.output;
    EXPECT_EQ(v.output.find("\nresult "), std::string::npos) << v.output;
  }
}

TEST(SpecCheck, EveryCommandAcceptsWhatNumericsAccepts) {
  for (const char* spec : kAccepted) {
    SCOPED_TRACE(spec);
    const CommandResult n = numerics(spec);
    ASSERT_EQ(n.exit_code, 0) << n.output;
    // The canonical form is accepted as well, by all three.
    const std::string canonical = n.output.substr(0, n.output.find('\n'));
    for (const std::string& s : {std::string(spec), canonical}) {
      EXPECT_EQ(numerics(s).exit_code, 0) << s;
      const std::filesystem::path out = fresh_dir("spec_check_attention");
      const CommandResult a = attention(s, out / "run");
      EXPECT_EQ(a.exit_code, 0) << s << "\n" << a.output;
      const CommandResult v = validate(s);
      EXPECT_EQ(v.exit_code, 0) << s << "\n" << v.output;
      EXPECT_NE(v.output.find("\nresult "), std::string::npos) << v.output;
    }
  }
}

}  // namespace
}  // namespace simprec::testing
