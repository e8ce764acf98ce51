// A digest of every output bit of the emulated attention over a fixed list of numerics specs and
// shapes: the check that a change of the engine's structure changes no result.
//   numerics_digest --enumerate > specs.txt   every preset at several formats, each structural
//                                             option's every value on several bases, mitigations
//                                             and stochastic sites
//   numerics_digest specs.txt > digests.txt   one line per (spec, shape): a hash of O, LSE, dQ,
//                                             dK, dV, D and the row sums, or "refused"
// Run the second step at two revisions on the same specs.txt and compare the files
// (scripts/digest_check.sh does both).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"

namespace sa = simprec::attention;

namespace {

struct Shape {
  const char* name;
  int64_t heads, nq, nk, d, dv;
  bool causal;
};

// Shapes that cross tile boundaries, unequal lengths, both masks, and split-KV under
// dispatch=torch-flash (few queries against many keys).
constexpr Shape kShapes[] = {
    {"h2_q37_k37_d16", 2, 37, 37, 16, 16, false},
    {"h2_q37_k37_d16_causal", 2, 37, 37, 16, 16, true},
    {"h1_q130_k77_d24", 1, 130, 77, 24, 24, false},
    {"h1_q200_k200_d64_causal", 1, 200, 200, 64, 64, true},
    {"h1_q8_k700_d64", 1, 8, 700, 64, 64, false},
    {"h1_q70_k150_d128_causal", 1, 70, 150, 128, 128, true},
};

sa::AttentionInputs make_inputs(const Shape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  sa::AttentionInputs in;
  in.shape = {1, s.heads, s.nq, s.nk, s.d, s.dv};
  const auto fill = [&](std::vector<double>& x, int64_t n, double scale) {
    x.resize(n);
    for (auto& v : x) v = scale * normal(rng);
  };
  fill(in.q, s.heads * s.nq * s.d, 1.5);
  fill(in.k, s.heads * s.nk * s.d, 1.5);
  fill(in.v, s.heads * s.nk * s.dv, 1.0);
  fill(in.d_out, s.heads * s.nq * s.dv, 1.0);
  // Repeated maxima: some keys copied, so that rows see exact ties.
  for (int64_t h = 0; h < s.heads; ++h) {
    for (int64_t j = 3; j < s.nk; j += 7) {
      for (int64_t c = 0; c < s.d; ++c) {
        in.k[(h * s.nk + j) * s.d + c] = in.k[(h * s.nk + j - 3) * s.d + c];
      }
    }
  }
  return in;
}

uint64_t fnv(uint64_t h, const std::vector<double>& x) {
  for (double v : x) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; ++i) {
      h ^= (bits >> (8 * i)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

void enumerate() {
  const char* formats[] = {"bf16", "fp16", "fp32", "e4m3fn"};
  for (const std::string& preset : sa::preset_names()) {
    for (const char* f : formats) std::cout << preset << ",format=" << f << "\n";
  }
  const char* bases[] = {"fa2",  "torch-flash", "torch-efficient", "torch-flex",
                         "fp32", "paper-a",     "cuda-fa2"};
  for (const sa::StructuralOption& o : sa::structural_options()) {
    std::vector<std::string> values(o.choices.begin(), o.choices.end());
    if (values.empty()) {
      if (o.key == std::string_view("tile") || o.key == std::string_view("bwd_tile")) {
        values = {"32x16", "16x48", "64x128", "auto"};
      } else if (o.key == std::string_view("pv_promote")) {
        values = {"1", "3"};
      } else if (o.key == std::string_view("p_scale")) {
        values = {"256", "0.5"};
      } else if (o.key == std::string_view("lazy_rescale")) {
        values = {"8", "0.5"};
      } else if (o.key == std::string_view("qk_quant") || o.key == std::string_view("v_quant")) {
        values = {"e4m3fn", "int8"};
      } else if (o.key == std::string_view("sram")) {
        values = {"16384", "4096"};
      } else if (o.key == std::string_view("kv_splits")) {
        values = {"3", "auto"};
      } else if (o.key == std::string_view("batch_heads")) {
        values = {"300"};
      } else if (o.key == std::string_view("sms")) {
        values = {"20"};
      }
    }
    for (const char* base : bases) {
      for (const std::string& v : values) std::cout << base << "," << o.key << "=" << v << "\n";
    }
  }
  // Combinations the presets do not make but the options allow.
  const char* extra[] = {
      "fa2,rowsum_lanes=4,rowsum_rescale=fma",
      "fa2,rowsum_block=quad-fma,rowsum_warps=2",
      "torch-flex,rescale=exp2-shift-fma,flex_compile=dynamic",
      "fa2,exp_impl=exp2,rescale=exp2-shift,lse_impl=shift-div-log2e,device_math=sm90",
      "fa2,exp_impl=exp2-scaled,rescale=exp2-diff,lse_impl=fma-log2-div-full",
      "fa2,exp_impl=exp2-scaled-fma,lse_impl=log2,rowsum_block=warp-groups",
      "torch-efficient,query_order=split-keys,split_ties=shuffled",
      "torch-efficient,query_order=split-keys,split_ties=ascending,batch_heads=300",
      "torch-flash,kv_splits=4,device_math=correctly-rounded",
      "fp32,flash_state=normalised,tile=16x16",
      "paper-b,block_order=swapped",
      "paper-b,block_order=square",
      "fa2,delta=dpp,delta_sum=fa2",
      "fa3-fp8,format=e4m3fn,pv_promote=2,qk_quant=e4m3fn,qk_scale=block,v_quant=e4m3fn",
      "fa3-fp8,format=e4m3fn,qk_quant=e4m3fn,qk_scale=tensor,v_quant=e4m3fn,v_scale=tensor",
      "fa2,lazy_rescale=8,p_scale=256,format=e4m3fn",
      "sage,format=fp16",
      "sage2,format=bf16",
      // Mitigations and stochastic sites (their random streams).
      "fa2,sr-p",
      "fa2,sr-p:8",
      "fa2,sr-p-tiled:8",
      "cuda-fa2,sr-p-tiled:4",
      "paper-a,sr-o",
      "paper-a,sr-o:8",
      "flash-lp,sr-o:12",
      "fa2,beta-rowmax",
      "fa2,beta-rowmax:3:0.01",
      "cuda-fa2,beta-rowmax:2",
      "torch-math,beta-rowmax",
      "fa2,hp:p_cast",
      "fa2,hp:o_out:fp32",
      "fa2,delta-dpp",
      "fa2,rowsum=bf16:sr8,o_rescale=bf16:sr8,exp_arg=fp32:sr16,exp=bf16:sr8",
      "fa2,rowsum_lanes=4,rowsum=bf16:sr8,o_rescale=bf16:sr8,lse=bf16:sr8",
      "fa2,rowsum_lanes=4,rowsum_rescale=fma,rowsum=bf16:sr8,o_rescale=bf16:sr8",
      "fa2,rowsum_block=warp-groups,rowsum=bf16:sr8",
      "fa2,rowsum_block=quad-fma,rowsum_warps=2,rowsum=bf16:sr8,o_rescale=bf16:sr8",
      "fa2,rescale=exp2-diff,o_rescale=bf16:sr8",
      "fa2,rescale=exp2-shift-fma,o_rescale=bf16:sr8",
      "fa2,pv_promote=2,o_update=bf16:sr8,o_rescale=bf16:sr8",
      "paper-a,o_update=bf16:sr8,rowsum=bf16:sr8",
      "fa2,delta_sum=fa2,d=bf16:sr8",
      "fa2,delta_sum=mem-eff,d=bf16:sr8",
      "fa2,delta_sum=triton,d=bf16:sr8",
      "fa2,delta_sum=triton-looped,d=bf16:sr8",
      "torch-flash,lse=fp32:sr16,o_norm=bf16:sr8,kv_splits=3",
      "fa2,dq=block-partials,dq_acc=bf16:sr8,ds=bf16:sr8,grad_out=bf16:sr8",
      "fa2,grad_scale=ds,ds=bf16:sr8,ds_cast=bf16:sr4",
      "fa2,grad_scale=fp32-then-cast,dk_acc=bf16:sr8",
      "fa2,lse_impl=fma-log,lse=bf16:sr8",
      "fa2,lse_impl=fma-log2-div,lse=bf16:sr8",
      "torch-flex,lse=bf16:sr8,exp_arg=bf16:sr8",
      "fp32,flash_state=normalised,o_rescale=bf16:sr8,o_update=bf16:sr8,o_norm=bf16:sr8",
      "torch-math,exp=bf16:sr8,p_norm=bf16:sr8,p_cast=bf16:sr8",
      "baseline-lp,sr-o",
      "fa2,s=fp32:sr16,pv_acc=fp32:sr16,dp=fp32:sr16",
  };
  for (const char* e : extra) std::cout << e << "\n";
}

int digest(const char* path) {
  std::ifstream file(path);
  if (!file) {
    std::cerr << "cannot read " << path << "\n";
    return 1;
  }
  std::vector<sa::AttentionInputs> inputs;
  for (size_t i = 0; i < std::size(kShapes); ++i)
    inputs.push_back(make_inputs(kShapes[i], 1234 + i));
  std::string spec;
  while (std::getline(file, spec)) {
    if (spec.empty()) continue;
    for (size_t i = 0; i < std::size(kShapes); ++i) {
      const Shape& s = kShapes[i];
      std::string result;
      // Forward and backward, or the forward pass alone where the spec refuses the backward.
      for (const bool backward : {true, false}) {
        sa::AttentionInputs in = inputs[i];
        if (!backward) in.d_out.clear();
        try {
          sa::AttentionConfig config = sa::parse_numerics(spec, simprec::formats::bf16);
          config.causal = s.causal;
          config.seed = 77;
          config.threads = 1;
          const sa::AttentionOutputs out = sa::run_attention(in, config);
          uint64_t h = 0xcbf29ce484222325ULL;
          for (const auto* x :
               {&out.o, &out.lse, &out.dq, &out.dk, &out.dv, &out.delta, &out.row_sum}) {
            h = fnv(h, *x);
          }
          char text[40];
          std::snprintf(text, sizeof text, "%s%016llx", backward ? "" : "forward ",
                        static_cast<unsigned long long>(h));
          result = text;
          break;
        } catch (const std::exception&) {
          result = "refused";
        }
      }
      std::cout << spec << "\t" << s.name << "\t" << result << "\n" << std::flush;
    }
    // The per-site statistics of a traced run (every rounding event), on the first shape.
    std::string traced = "refused";
    try {
      sa::AttentionConfig config = sa::parse_numerics(spec, simprec::formats::bf16);
      config.seed = 77;
      config.threads = 1;
      config.trace = true;
      sa::AttentionInputs in = inputs[0];
      in.d_out.clear();
      const sa::AttentionOutputs out = sa::run_attention(in, config);
      std::string text;
      for (const auto& t : out.traces) text += t.to_json().dump();
      traced = std::to_string(std::hash<std::string>{}(text));
    } catch (const std::exception&) {
    }
    std::cout << spec << "\ttrace\t" << traced << "\n" << std::flush;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--enumerate") == 0) {
    enumerate();
    return 0;
  }
  if (argc == 2) return digest(argv[1]);
  std::cerr << "usage: numerics_digest --enumerate | numerics_digest SPECS\n";
  return 2;
}
