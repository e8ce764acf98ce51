// The numerics spec (lib/attention/numerics_spec.hpp) and the option and mitigation tables it
// reads (lib/attention/options.hpp): canonical forms written out by hand, the round trip from
// every preset, the equivalence with building a configuration step by step, the errors, the
// TOML form, and docs/attention.md carrying the tables as the code has them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "lib/attention/model.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"

namespace simprec::attention {
namespace {

// The numerics of a configuration: to_json without the texts it was written with.
nlohmann::json numerics_json(const AttentionConfig& c) {
  nlohmann::json j = to_json(c);
  j.erase("overrides");
  j.erase("mitigations");
  j["beta_arithmetic"] = to_string(c.beta_rowmax.arithmetic);
  return j;
}

std::string canonical(const std::string& spec, const Format& f = formats::bf16) {
  return canonical_numerics(parse_numerics(spec, f));
}

TEST(NumericsSpec, CanonicalFormsWrittenOutByHand) {
  // torch-math keeps P in fp32 (models/torch-math.toml), so p_cast=bf16:rne is a change.
  EXPECT_EQ(canonical("torch-math,p_cast=bf16:rne"), "torch-math,format=bf16,p_cast=bf16:rne");
  // A site spec without a rounding means round-to-nearest-even.
  EXPECT_EQ(canonical("torch-math,p_cast=bf16"), "torch-math,format=bf16,p_cast=bf16:rne");
  // Assignments equal to the preset's own values vanish.
  EXPECT_EQ(canonical("fa2,exp_impl=exp2-fma,tile=64x64"), "fa2,format=bf16");
  EXPECT_EQ(canonical("fa2", formats::fp16), "fa2,format=fp16");
  EXPECT_EQ(canonical("fa2,format=fp16"), "fa2,format=fp16");
  // Mitigations with their defaults written out (mitigation table: beta 2, eps 0.001, 32 bits).
  EXPECT_EQ(canonical("cuda-fa2,beta-rowmax"), "cuda-fa2,format=bf16,beta-rowmax:2:0.001");
  EXPECT_EQ(canonical("fa2,sr-p"), "fa2,format=bf16,sr-p:32");
  EXPECT_EQ(canonical("paper-a,beta-rowmax:3:1e-3"), "paper-a,format=bf16,beta-rowmax:3:0.001");
  EXPECT_EQ(canonical("fa2,hp:pv_acc"), "fa2,format=bf16,hp:pv_acc");
  EXPECT_EQ(canonical("fa2,hp:pv_acc:fp64"), "fa2,format=bf16,hp:pv_acc:fp64");
  // Options in table order, then sites in report order, whatever order they were given in.
  EXPECT_EQ(canonical("fa2,o_out=fp16,p_cast=bf16:rtz,tile=128x64,rescale=exp2-diff"),
            "fa2,format=bf16,rescale=exp2-diff,tile=128x64,p_cast=bf16:rtz,o_out=fp16:rne");
  // An accumulating site keeps its accumulation model in the text.
  EXPECT_EQ(canonical("fa2,pv_acc=fp32:rne:sequential"),
            "fa2,format=bf16,pv_acc=fp32:rne:sequential");
}

TEST(NumericsSpec, SameConfigurationAsBuildingItStepByStep) {
  AttentionConfig step = make_preset("torch-flash", formats::fp16);
  apply_override(step, "p_cast=fp16:sr8");
  apply_override(step, "rowsum_lanes=1");
  apply_override(step, "rowsum_rescale=mul");
  apply_mitigation(step, "beta-rowmax:3");
  const AttentionConfig spec = parse_numerics(
      "torch-flash,format=fp16,p_cast=fp16:sr8,rowsum_lanes=1,rowsum_rescale=mul,beta-rowmax:3",
      formats::bf16);
  EXPECT_EQ(numerics_json(spec), numerics_json(step));
  EXPECT_EQ(spec.low_precision, formats::fp16);
}

TEST(NumericsSpec, EveryPresetRoundTripsThroughItsCanonicalForm) {
  const std::vector<std::string> extras = {
      "",
      ",rowsum=fp32:rtz",
      ",beta-rowmax:1.5:0",
      ",sr-o:8,delta-dpp",
      ",sr-p-tiled:8,tile=32x128",
      ",algorithm=standard,s=fp32:rne:sequential",
      ",rescale=exact,lse_impl=exact,hp:o_norm,sr-p:16",
      ",bwd_exp_impl=exp2,delta_sum=fa2,query_order=descending,dq=block-partials",
      ",beta_arithmetic=fp32,beta-rowmax",
  };
  int checked = 0, refused = 0;
  for (const auto& preset : preset_names()) {
    for (const Format* f : {&formats::bf16, &formats::fp16, &formats::e4m3fn}) {
      // Models of one format (sage: fp16, its P.V is an fp16 product of fp16 V; the Triton
      // example: bf16) refuse the others, counted.
      const auto& only = find_builtin_model(preset)->only_formats;
      if (!only.empty() && std::find(only.begin(), only.end(), f->name()) == only.end()) {
        EXPECT_THROW(parse_numerics(preset, *f), std::invalid_argument);
        refused += static_cast<int>(extras.size());
        continue;
      }
      for (const auto& extra : extras) {
        const AttentionConfig c = parse_numerics(preset + extra, *f);
        const std::string text = canonical_numerics(c);
        const AttentionConfig again = parse_numerics(text, formats::fp64);
        EXPECT_EQ(numerics_json(again), numerics_json(c)) << preset + extra << " -> " << text;
        EXPECT_EQ(canonical_numerics(again), text) << "not a fixed point: " << text;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked + refused, static_cast<int>(preset_names().size() * 3 * extras.size()));
  // sage at bf16 and e4m3fn, triton-flash-forward at fp16 and e4m3fn.
  EXPECT_EQ(refused, static_cast<int>(4 * extras.size()));
}

TEST(NumericsSpec, ChangesMadeBehindTheSpecsBackAreRefused) {
  AttentionConfig c = make_preset("fa2", formats::bf16);
  c.site(Site::kPCast).format = formats::fp16;  // not through apply_override
  EXPECT_THROW(canonical_numerics(c), std::logic_error);
}

void expect_error(const std::string& spec, const std::string& fragment) {
  try {
    (void)parse_numerics(spec, formats::bf16);
    ADD_FAILURE() << "accepted '" << spec << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "'" << spec << "': " << e.what();
  }
}

TEST(NumericsSpec, BadSpecsNameTheOffendingItem) {
  expect_error("torch-math,out_format=bf16", "unknown site or option 'out_format'");
  expect_error("torch-math,out_format=bf16", "options: algorithm");
  expect_error("no-such-preset", "unknown preset 'no-such-preset'");
  expect_error("fa2,,sr-p", "empty item");
  expect_error("p_cast=bf16,fa2", "must start with a preset");
  expect_error("fa2,sr-q", "unknown mitigation 'sr-q'");
  expect_error("fa2,beta-rowmax:1", "expected a number > 1");
  expect_error("fa2,beta-rowmax:nan", "expected a finite number");
  expect_error("fa2,beta-rowmax:2:-1", "expected a number >= 0");
  expect_error("fa2,beta-rowmax:2:0.1:9", "takes at most 2");
  expect_error("fa2,sr-p:33", "sr-p random bit count '33' is not an integer in [1, 32]");
  expect_error("fa2,sr-p-tiled:3", "must divide 32");
  expect_error("fa2,tile=0x64", "tile '0x64' is not a tile size");
  expect_error("fa2,tile=64", "expected BRxBC");
  expect_error("fa2,rescale=fast", "unknown rescale 'fast' (known: exact, exp2-diff, exp2-shift");
  // Refused where a run would refuse them, not first by the run: a strategy's requirement.
  expect_error("fa2,rowsum_rescale=fma", "rowsum_rescale=fma needs rowsum_lanes=4, not 1");
  expect_error("torch-flash,exp_impl=natural",
               "rescale=exp2-diff needs exp_impl=exp2|exp2-fma|exp2-scaled|exp2-scaled-fma, not "
               "natural");
  expect_error("fa2,p_cast=bf17", "bf17");
  expect_error("fa2,format=bf17", "bf17");
  expect_error("fa2,hp", "hp takes a site");
  // Each item once: a second would silently win.
  expect_error("fa2,p_cast=bf16,p_cast=fp16",
               "p_cast is given twice ('p_cast=bf16' and 'p_cast=fp16'); give it once");
  expect_error("fa2,format=bf16,format=fp16", "format is given twice");
  expect_error("fa2,sr-p:8,sr-p:4", "sr-p is given twice");
  EXPECT_NO_THROW(parse_numerics("fa2,hp:p_cast:bf16,hp:o_out", formats::bf16));
  // A format without a sign or a zero cannot hold quantised values.
  expect_error("fa2,qk_quant=e8m0", "format e8m0 has no sign, so it cannot hold qk_quant's");
  // A tensor-core product's operands must be values of its input format.
  expect_error("fa2,p_cast=fp16",
               "pv_acc=fp32:rne:tc:sm90-mma-bf16 takes bf16 operands, but p_cast rounds P to "
               "fp16");
  expect_error("fa2,hp:p_cast", "but p_cast rounds P to fp32");
}

TEST(NumericsSpec, ErrorsQuoteABoundedExcerptOfTheSpec) {
  const std::string huge = "fa2," + std::string(120000, 'x');
  try {
    (void)parse_numerics(huge, formats::bf16);
    FAIL() << "accepted a 120 KB spec";
  } catch (const std::invalid_argument& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
    EXPECT_NE(std::string(e.what()).find(" bytes)"), std::string::npos) << e.what();
  }
}

TEST(NumericsSpec, KernelParametersComeFromTheMitigationTable) {
  const auto beta = mitigation_kernel_parameters("beta-rowmax:3");
  ASSERT_EQ(beta.size(), 3u);
  EXPECT_EQ(beta[0].name, "beta_rowmax");
  EXPECT_EQ(std::get<bool>(beta[0].value), true);
  EXPECT_EQ(std::get<double>(beta[1].value), 3.0);
  EXPECT_EQ(std::get<double>(beta[2].value), 0.001);
  const auto sr = mitigation_kernel_parameters("sr-p");
  ASSERT_EQ(sr.size(), 1u);
  EXPECT_EQ(sr[0].name, "sr_p_bits");
  EXPECT_EQ(std::get<int64_t>(sr[0].value), 32);  // the one default of sr-p
  EXPECT_THROW(mitigation_kernel_parameters("sr-o"), std::invalid_argument);
  EXPECT_THROW(mitigation_kernel_parameters("beta-rowmax:0.5"), std::invalid_argument);
}

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ =
        std::filesystem::temp_directory_path() /
        ("simprec_numerics_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml");
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

TEST(NumericsSpec, TomlFileSaysTheSameAsTheText) {
  TempFile file(
      "preset = \"torch-flash\"\nformat = \"fp16\"\nmitigations = [\"sr-p:8\"]\n[set]\n"
      "p_cast = \"fp16:rtz\"\ntile = \"64x64\"\n");
  EXPECT_EQ(canonical_numerics(parse_numerics(file.path(), formats::bf16)),
            "torch-flash,format=fp16,tile=64x64,p_cast=fp16:rtz,sr-p:8");
}

TEST(NumericsSpec, TomlFileErrorsGiveTheLine) {
  TempFile unknown("preset = \"fa2\"\nmitigation = [\"sr-p\"]\n");
  try {
    (void)parse_numerics(unknown.path(), formats::bf16);
    ADD_FAILURE() << "accepted an unknown key";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mitigation"), std::string::npos) << e.what();
  }
  TempFile bad_site("preset = \"fa2\"\n[set]\np_cast = \"bf16:rne\"\nout_format = \"bf16\"\n");
  try {
    (void)parse_numerics(bad_site.path(), formats::bf16);
    ADD_FAILURE() << "accepted an unknown site";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(":4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out_format"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace simprec::attention
