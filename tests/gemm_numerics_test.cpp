// GEMM numerics specs (lib/gemm/gemm_numerics.hpp): presets, keys, canonical text, and errors that
// name the offending item with a did-you-mean.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "lib/gemm/gemm_numerics.hpp"
#include "lib/gemm/split_k.hpp"

namespace simprec::gemm {
namespace {

std::string error_of(const std::string& spec) {
  try {
    (void)parse_gemm_numerics(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GemmNumerics, EveryPresetReadsBackFromItsCanonicalText) {
  for (const GemmPreset& p : gemm_presets()) {
    const GemmNumerics g = parse_gemm_numerics(std::string(p.name));
    EXPECT_EQ(canonical_gemm_numerics(g), p.name);
    // The preset's assignments, written on top of it, change nothing.
    EXPECT_EQ(canonical_gemm_numerics(
                  parse_gemm_numerics(std::string(p.name) + "," + std::string(p.assignments))),
              p.name);
  }
}

TEST(GemmNumerics, KeysSetWhatTheySay) {
  const GemmNumerics g = parse_gemm_numerics(
      "cublas-bf16,out=fp32,split_k=cublas-sm90,tile=32x64,cluster=8,promote=256,"
      "scaling=row,scale_order=b-then-a");
  EXPECT_EQ(g.instruction->name, "tc:sm90-wgmma-bf16");
  EXPECT_EQ(g.out, formats::fp32);
  EXPECT_EQ(g.split_k->name(), "cublas-sm90");
  EXPECT_EQ(g.tile_m, 32);
  EXPECT_EQ(g.tile_n, 64);
  EXPECT_EQ(g.cluster, 8);
  EXPECT_EQ(g.promote_every, 256);
  EXPECT_EQ(g.scaling, Scaling::kRow);
  EXPECT_EQ(g.scale_order, ScaleOrder::kBThenA);
  // Canonical order is the keys' order, whatever the spec's.
  EXPECT_EQ(canonical_gemm_numerics(g),
            "cublas-bf16,promote=256,split_k=cublas-sm90,tile=32x64,cluster=8,scaling=row,"
            "scale_order=b-then-a,out=fp32");
  const GemmNumerics p = parse_gemm_numerics("chain,split_k=pieces:3");
  EXPECT_EQ(p.split_value, 3);
  EXPECT_EQ(canonical_gemm_numerics(p), "chain,split_k=pieces:3");
  EXPECT_EQ(canonical_gemm_numerics(parse_gemm_numerics("scaled-mm-e4m3,promote=none")),
            "scaled-mm-e4m3,promote=none");
}

TEST(GemmNumerics, ErrorsNameTheItemAndSuggest) {
  EXPECT_NE(error_of("scaled-mm-e4m4")
                .find("unknown GEMM preset 'scaled-mm-e4m4'; did you mean 'scaled-mm-e4m3'?"),
            std::string::npos)
      << error_of("scaled-mm-e4m4");
  EXPECT_NE(error_of("chain,promte=128").find("unknown key 'promte'; did you mean 'promote'?"),
            std::string::npos)
      << error_of("chain,promte=128");
  EXPECT_NE(error_of("chain,split_k=cublas-sm9")
                .find("unknown split_k 'cublas-sm9'; did you mean 'cublas-sm90'?"),
            std::string::npos)
      << error_of("chain,split_k=cublas-sm9");
  EXPECT_NE(error_of("chain,instruction=tc:sm90-wgmma-e4m4").find("did you mean"),
            std::string::npos);
  EXPECT_NE(error_of("chain,out=fp8").find("unknown out 'fp8'"), std::string::npos);
  EXPECT_NE(error_of("chain,split_k=pieces").find("split_k 'pieces': expected pieces:N"),
            std::string::npos)
      << error_of("chain,split_k=pieces");
  EXPECT_NE(error_of("chain,split_k=none:2").find("expected none"), std::string::npos);
  EXPECT_NE(error_of("chain,promote=0").find("promote '0' is not an integer in [1, "),
            std::string::npos)
      << error_of("chain,promote=0");
  EXPECT_NE(error_of("chain,out=bf16,out=fp16").find("out is given twice"), std::string::npos);
  EXPECT_NE(error_of("out=bf16").find("must start with a preset"), std::string::npos);
  EXPECT_NE(error_of("chain,,out=bf16").find("empty item"), std::string::npos);
  EXPECT_NE(error_of("chain,bf16").find("'bf16' is not KEY=VALUE"), std::string::npos);
  EXPECT_NE(error_of("chain,tile=64").find("tile '64': expected MxN"), std::string::npos);
  EXPECT_NE(error_of("chain,problem=64").find("problem '64': expected MxN or auto"),
            std::string::npos);
  EXPECT_NE(error_of("chain,cluster=3").find("unknown cluster '3'"), std::string::npos);
  EXPECT_NE(error_of("chain,instruction=tc:sm90-wgmma-fp16acc").find("accumulates in fp16"),
            std::string::npos)
      << error_of("chain,instruction=tc:sm90-wgmma-fp16acc");
}

// The cuBLAS rule against the pieces cuBLAS ran in recorded kernels (tests/data/gemm and its
// dispatch sweep: the kernel's tile and cluster from its name, the pieces from its grid).
TEST(GemmNumerics, CublasSplitKGivesTheRecordedPieces) {
  struct Case {
    const char* spec;
    int m, n, k, length;
  };
  const Case cases[] = {
      // matmul.fp16.off.64x64x16384, nvjet_sm90_hsh_64x32_64x16_1x2: 12 pieces of 1408
      {"cublas-fp16-splitk,tile=32x64,cluster=2", 64, 64, 16384, 1408},
      // matmul.bf16.on.128x128x32768, nvjet_sm90_tst_64x32_64x16_1x2: capped at 132 / 8 = 16
      {"cublas-bf16-splitk,tile=32x64,cluster=2", 128, 128, 32768, 2048},
      // 32 rows of that GEMM: the cap weighs the whole GEMM's tiles, not the rows run
      {"cublas-bf16-splitk,tile=32x64,cluster=2,problem=128x128", 32, 128, 32768, 2048},
      {"cublas-bf16-splitk,tile=32x64,cluster=2", 32, 128, 32768, 1408},
      // fewer than twice 2688 bytes: one piece
      {"cublas-bf16-splitk", 64, 64, 1408, 1408},
      {"cublas-bf16-splitk", 64, 64, 2560, 2560},
      // matmul.bf16.on.128x128x20480, nvjet_sm90_tst_64x32_64x16_2x4 (clusters of 8), a grid of
      // 96: 12 pieces of 1728
      {"cublas-bf16-splitk,tile=32x64,cluster=8", 128, 128, 20480, 1728},
  };
  for (const Case& c : cases) {
    const GemmNumerics g = parse_gemm_numerics(c.spec);
    EXPECT_EQ(g.split_k->piece_length(g, c.m, c.n, c.k), c.length) << c.spec;
  }
  EXPECT_EQ(ctas_at_once(8), 96);
  EXPECT_EQ(ctas_at_once(4), 132);
}

TEST(GemmNumerics, ReferenceListsEveryPresetKeyAndStrategy) {
  const std::string md = gemm_reference_markdown();
  for (const GemmPreset& p : gemm_presets())
    EXPECT_NE(md.find("`" + std::string(p.name) + "`"), std::string::npos) << p.name;
  for (const GemmKey& k : gemm_keys())
    EXPECT_NE(md.find("`" + std::string(k.key) + "`"), std::string::npos) << k.key;
  for (const SplitKStrategy* s : split_k_strategies())
    EXPECT_NE(md.find("`" + std::string(s->syntax()) + "`"), std::string::npos) << s->name();
}

// docs/gemm.md carries the tables `simprec gemm --list` prints, word for word.
TEST(GemmNumerics, DocsCarryTheReferenceTables) {
  std::ifstream in(std::string(SIMPREC_SOURCE_DIR) + "/docs/gemm.md");
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find(gemm_reference_markdown()), std::string::npos)
      << "docs/gemm.md differs from `simprec gemm --list`:\n"
      << gemm_reference_markdown();
}

}  // namespace
}  // namespace simprec::gemm
