// The torch-flash and torch-efficient dispatch (lib/attention/dispatch.hpp) against the kernels
// PyTorch's profiler saw on an H100 for each recorded shape (tests/data/torch_kernels/
// summary_sdpa.json: 132 SMs), and the split-KV forward pass against the unsplit one.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/dispatch.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

nlohmann::json recorded_summary() {
  std::ifstream f(std::string(SIMPREC_SOURCE_DIR) + "/tests/data/torch_kernels/summary_sdpa.json");
  if (!f) throw std::runtime_error("tests/data/torch_kernels/summary_sdpa.json not found");
  return nlohmann::json::parse(f);
}

// The integers of the first match's group 1, a comma-separated template argument list.
std::vector<int> template_integers(const nlohmann::json& dispatch, const std::regex& pattern) {
  for (const auto& kernel : dispatch) {
    std::smatch m;
    const std::string name = kernel.get<std::string>();
    if (std::regex_search(name, m, pattern)) {
      std::vector<int> values;
      const std::string args = m[1].str();
      const std::regex number("-?[0-9]+");
      for (auto it = std::sregex_iterator(args.begin(), args.end(), number);
           it != std::sregex_iterator(); ++it) {
        values.push_back(std::stoi(it->str()));
      }
      return values;
    }
  }
  return {};
}

AttentionShape shape_of(const nlohmann::json& entry) {
  const int64_t d = entry["d"].get<int64_t>();
  return {1, 1, entry["Sq"].get<int64_t>(), entry["Sk"].get<int64_t>(), d, d};
}

AttentionConfig dispatched(const std::string& preset, const nlohmann::json& entry, int sms) {
  AttentionConfig c = make_preset(preset, formats::bf16);
  c.batch_heads = entry["B"].get<int>() * entry["H"].get<int>();
  c.sms = sms;
  c.causal = entry["causal"].get<bool>();
  return resolve_dispatch(c, shape_of(entry));
}

TEST(AttentionDispatch, TorchFlashPicksTheRecordedKernelsTilesAndSplits) {
  const nlohmann::json summary = recorded_summary();
  const int sms = summary["multiprocessors"].get<int>();
  // Flash_fwd_kernel_traits<d, BM, BN, warps, ...> of the forward kernel; the combine kernel's
  // <traits, kBlockM, Log_max_splits, ...>; Flash_bwd_kernel_traits<d, BM, BN, ...>.
  const std::regex forward(R"(flash_fwd_kernel<Flash_fwd_kernel_traits<([0-9, ]+))");
  const std::regex split(R"(flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<([0-9, ]+))");
  const std::regex combine(
      R"(flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<[^>]*>[^>]*>, ([0-9]+, [0-9]+))");
  const std::regex backward(
      R"(flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<([0-9, ]+))");
  int checked = 0;
  for (const auto& [name, entry] : summary["shapes"].items()) {
    const auto& kernel = entry["kernels"]["flash"];
    if (!kernel.contains("dispatch")) continue;  // no flash kernel for causal Sq != Sk
    const AttentionConfig c = dispatched("torch-flash", entry, sms);
    const std::vector<int> fwd = template_integers(kernel["dispatch"], forward);
    const std::vector<int> spl = template_integers(kernel["dispatch"], split);
    const std::vector<int> comb = template_integers(kernel["dispatch"], combine);
    const std::vector<int> bwd = template_integers(kernel["dispatch"], backward);
    ASSERT_GE(bwd.size(), 3u) << name;
    if (!fwd.empty()) {
      EXPECT_EQ(c.kv_splits, 1) << name;
      EXPECT_EQ(c.block_rows, fwd[1]) << name;
      EXPECT_EQ(c.block_cols, fwd[2]) << name;
    } else {
      ASSERT_GE(spl.size(), 3u) << name;
      ASSERT_EQ(comb.size(), 2u) << name;
      EXPECT_EQ(c.block_rows, spl[1]) << name;
      EXPECT_EQ(c.block_cols, spl[2]) << name;
      // The combine kernel is compiled for 2^Log_max_splits >= splits > 2^(Log_max_splits - 1)
      // (at least 2).
      const int log_max = comb[1];
      EXPECT_LE(c.kv_splits, 1 << log_max) << name;
      EXPECT_GT(c.kv_splits, log_max == 1 ? 1 : 1 << (log_max - 1)) << name;
      // kBlockM of the combine kernel: 4, 8 or 16 as the head dimension is a multiple of 128,
      // of 64, or neither.
      const int64_t hd = flash_kernel_head_dim(entry["d"].get<int64_t>());
      EXPECT_EQ(comb[0], hd % 128 == 0 ? 4 : hd % 64 == 0 ? 8 : 16) << name;
    }
    EXPECT_EQ(c.bwd_block_rows, bwd[1]) << name;
    EXPECT_EQ(c.bwd_block_cols, bwd[2]) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 31);
}

TEST(AttentionDispatch, TorchEfficientPicksTheRecordedKernelsTiles) {
  const nlohmann::json summary = recorded_summary();
  const std::regex forward(R"(fmha_cutlassF_bf16_aligned_([0-9]+x[0-9]+))");
  const std::regex backward(R"(fmha_cutlassB_bf16_aligned_([0-9]+x[0-9]+))");
  int checked = 0;
  for (const auto& [name, entry] : summary["shapes"].items()) {
    const auto& kernel = entry["kernels"]["efficient"];
    const AttentionConfig c = dispatched("torch-efficient", entry, 132);
    const std::vector<int> fwd = template_integers(kernel["dispatch"], forward);
    const std::vector<int> bwd = template_integers(kernel["dispatch"], backward);
    ASSERT_EQ(fwd.size(), 2u) << name;
    ASSERT_EQ(bwd.size(), 2u) << name;
    EXPECT_EQ(c.block_rows, fwd[0]) << name;
    EXPECT_EQ(c.block_cols, fwd[1]) << name;
    EXPECT_EQ(c.bwd_block_rows, bwd[0]) << name;
    EXPECT_EQ(c.bwd_block_cols, bwd[1]) << name;
    EXPECT_EQ(c.kv_splits, 1) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 32);
}

TEST(AttentionDispatch, NumSplitsHeuristicFollowsTheSourcesWorkedExample) {
  // flash_api.cpp's comment: batch * n_heads = 48 on 108 SMs takes 2 splits (efficiency 0.89)
  // over 3 (0.67).
  EXPECT_EQ(flash_num_splits(48, 108, 64, 128), 2);
  // Blocks that fill 80% of the SMs run one split; one key block cannot be split.
  EXPECT_EQ(flash_num_splits(212, 264, 64, 128), 1);
  EXPECT_EQ(flash_num_splits(1, 264, 1, 128), 1);
}

TEST(AttentionDispatch, SplitKvAgreesWithOneSplitInFp64) {
  // In fp64 the combine step is exact up to the order of additions: O and the LSE of 4 splits
  // agree with the unsplit pass to 1e-13, causal included (splits with no visible key).
  const AttentionInputs in = inputs::generate("normal", {1, 2, 200, 200, 32, 32}, 3, false);
  for (const bool causal : {false, true}) {
    AttentionConfig one = make_config(parse_numerics_spec("fp64,tile=64x32"), formats::fp64);
    one.causal = causal;
    AttentionConfig four = one;
    four.kv_splits = 4;
    const AttentionOutputs a = run_attention(in, one), b = run_attention(in, four);
    for (size_t i = 0; i < a.o.size(); ++i) EXPECT_NEAR(a.o[i], b.o[i], 1e-13) << i;
    for (size_t i = 0; i < a.lse.size(); ++i) EXPECT_NEAR(a.lse[i], b.lse[i], 1e-13) << i;
  }
}

TEST(AttentionDispatch, AutomaticTilesNeedADispatchAndAKnownHeadDimension) {
  // Refused when read, whatever the shape; a configuration built otherwise, when resolved.
  EXPECT_THROW(make_config(parse_numerics_spec("fa2,tile=auto"), formats::bf16),
               std::invalid_argument);
  AttentionConfig c = make_preset("fa2", formats::bf16);
  c.block_rows = c.block_cols = 0;
  EXPECT_THROW(resolve_dispatch(c, {1, 1, 64, 64, 64, 64}), std::invalid_argument);
  c = make_preset("torch-flash", formats::bf16);
  EXPECT_THROW(resolve_dispatch(c, {1, 1, 64, 64, 256, 256}), std::invalid_argument);
  // Given explicitly, nothing is left to the dispatch.
  c = make_config(parse_numerics_spec("torch-flash,tile=64x64,bwd_tile=64x64,kv_splits=2"),
                  formats::bf16);
  const AttentionConfig r = resolve_dispatch(c, {1, 1, 64, 64, 256, 256});
  EXPECT_EQ(r.block_rows, 64);
  EXPECT_EQ(r.kv_splits, 2);
}

}  // namespace
}  // namespace simprec::attention
