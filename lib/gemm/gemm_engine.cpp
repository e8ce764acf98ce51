#include "lib/gemm/gemm_engine.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "emulation/bulk.hpp"
#include "emulation/round.hpp"
#include "lib/gemm/split_k.hpp"

namespace simprec::gemm {
namespace {

// One chain of instructions over K elements [k0, k1) from C = +0, as fp32 values.
std::vector<float> chain(const TensorCoreModel& model, const GemmOperands& o, int k0, int k1,
                         unsigned threads) {
  const int m = o.m, n = o.n, len = k1 - k0;
  const std::vector<uint32_t> zeros(static_cast<size_t>(m) * n, 0u);
  std::vector<uint32_t> bits;
  if (k0 == 0 && k1 == o.k) {
    bits = tensor_core_gemm(model, o.a, o.b, zeros, m, n, len, threads);
  } else {
    std::vector<uint16_t> a(static_cast<size_t>(m) * len);
    for (int i = 0; i < m; ++i)
      std::copy_n(o.a.data() + static_cast<size_t>(i) * o.k + k0, len,
                  a.data() + static_cast<size_t>(i) * len);
    const std::span<const uint16_t> b =
        o.b.subspan(static_cast<size_t>(k0) * n, static_cast<size_t>(len) * n);
    bits = tensor_core_gemm(model, a, b, zeros, m, n, len, threads);
  }
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) values[i] = std::bit_cast<float>(bits[i]);
  return values;
}

// acc += x elementwise, each sum rounded to fp32.
void add_into(std::vector<float>& acc, const std::vector<float>& x) {
  for (size_t i = 0; i < acc.size(); ++i) acc[i] += x[i];
}

// Block scales: each block [c, c + block) of the piece one chain from +0, its result times
// fl(scale_a * scale_b) of its row's and column's scales for that block, added in fp32 from +0.
std::vector<float> block_scaled_piece(const GemmNumerics& g, const GemmOperands& o, int k0, int k1,
                                      unsigned threads) {
  const int block = block_length(g.block_scales);
  const int blocks = (o.k + block - 1) / block;
  std::vector<float> acc(static_cast<size_t>(o.m) * o.n, 0.0f);
  for (int c = k0; c < k1; c += block) {
    const std::vector<float> x = chain(*g.instruction, o, c, std::min(k1, c + block), threads);
    const int q = c / block;
    for (int i = 0; i < o.m; ++i) {
      const float sa = o.block_scale_a[static_cast<size_t>(i) * blocks + q];
      for (int j = 0; j < o.n; ++j) {
        const float scale = sa * o.block_scale_b[static_cast<size_t>(q) * o.n + j];
        const size_t at = static_cast<size_t>(i) * o.n + j;
        acc[at] += x[at] * scale;
      }
    }
  }
  return acc;
}

// A piece [k0, k1) of K: one chain, or (promotion within the piece) chains of promote_every
// elements added to an fp32 accumulator from +0.
std::vector<float> piece(const GemmNumerics& g, const GemmOperands& o, int k0, int k1,
                         unsigned threads) {
  if (g.block_scales != BlockScales::kNone) return block_scaled_piece(g, o, k0, k1, threads);
  const int p = g.promote_every;
  if (p == 0 || p >= k1 - k0) return chain(*g.instruction, o, k0, k1, threads);
  std::vector<float> acc(static_cast<size_t>(o.m) * o.n, 0.0f);
  for (int c = k0; c < k1; c += p)
    add_into(acc, chain(*g.instruction, o, c, std::min(k1, c + p), threads));
  return acc;
}

void check_values(std::span<const float> values, const char* name, int count, bool one_only,
                  const char* per) {
  if (values.empty() || values.size() == 1 ||
      (!one_only && values.size() == static_cast<size_t>(count)))
    return;
  std::string expected = "1 (tensor-wise)";
  if (!one_only) expected += " or " + std::to_string(count) + " (one per " + per + ")";
  throw std::invalid_argument(std::string(name) + ": " + std::to_string(values.size()) +
                              " values; expected " + expected);
}

// Block scales: given exactly when the numerics have them, of the right sizes, and values of
// their format (E8M0: powers of two in [2^-127, 2^127]; NVFP4: positive finite e4m3 values).
void check_block_scales(const GemmNumerics& g, const GemmOperands& o) {
  if (g.block_scales == BlockScales::kNone) {
    if (!o.block_scale_a.empty() || !o.block_scale_b.empty()) {
      throw std::invalid_argument(
          std::string(o.block_scale_a.empty() ? "block_scale_b" : "block_scale_a") +
          " given, but the numerics have block_scales=none");
    }
    return;
  }
  const int block = block_length(g.block_scales);
  const size_t blocks = (static_cast<size_t>(o.k) + block - 1) / block;
  const Format format = block_scale_format(g.block_scales);
  const auto check = [&](std::span<const float> s, const char* name, size_t rows, size_t cols) {
    if (s.size() != rows * cols) {
      throw std::invalid_argument(std::string(name) + ": " + std::to_string(s.size()) +
                                  " values; expected " + std::to_string(rows) + " x " +
                                  std::to_string(cols) + " (blocks of " + std::to_string(block) +
                                  " elements of K)");
    }
    for (size_t x = 0; x < s.size(); ++x) {
      const double v = s[x];
      const bool exact = v > 0 && decode(format, round_to_format(format, unrounded_from_double(v),
                                                                 Rounding{})) == v;
      if (!exact) {
        throw std::invalid_argument(std::string(name) + "[" + std::to_string(x) +
                                    "] = " + std::to_string(v) + " is not a positive " +
                                    format.name() + " value");
      }
    }
  };
  check(o.block_scale_a, "block_scale_a", static_cast<size_t>(o.m), blocks);
  check(o.block_scale_b, "block_scale_b", blocks, static_cast<size_t>(o.n));
}

void check_operands(const GemmNumerics& g, const GemmOperands& o) {
  if (o.m < 0 || o.n < 0 || o.k < 0 || o.a.size() != static_cast<size_t>(o.m) * o.k ||
      o.b.size() != static_cast<size_t>(o.k) * o.n) {
    throw std::invalid_argument("A and B: sizes do not match M=" + std::to_string(o.m) +
                                ", N=" + std::to_string(o.n) + ", K=" + std::to_string(o.k));
  }
  if (g.scaling == Scaling::kNone && (!o.scale_a.empty() || !o.scale_b.empty())) {
    throw std::invalid_argument(std::string(o.scale_a.empty() ? "scale_b" : "scale_a") +
                                " given, but the numerics have scaling=none (" +
                                canonical_gemm_numerics(g) +
                                "); give scaling=tensor or scaling=row");
  }
  const bool tensor = g.scaling == Scaling::kTensor;
  check_values(o.scale_a, "scale_a", o.m, tensor, "row");
  check_values(o.scale_b, "scale_b", o.n, tensor, "column");
  check_block_scales(g, o);
  if (!o.bias.empty() && o.bias.size() != static_cast<size_t>(o.n)) {
    throw std::invalid_argument("bias: " + std::to_string(o.bias.size()) + " values; expected " +
                                std::to_string(o.n) + " (one per output column)");
  }
}

float value_at(std::span<const float> values, int index) {
  return values.empty() ? 1.0f : values[values.size() == 1 ? 0 : index];
}

}  // namespace

std::vector<float> run_gemm(const GemmNumerics& g, const GemmOperands& o, unsigned threads) {
  check_gemm_numerics(g);
  check_operands(g, o);
  const size_t outputs = static_cast<size_t>(o.m) * o.n;
  const int length = o.k == 0 ? 1 : g.split_k->piece_length(g, o.m, o.n, o.k);
  const int block = block_length(g.block_scales);
  if (block && length < o.k && length % block != 0) {
    throw std::invalid_argument("split_k pieces of " + std::to_string(length) +
                                " elements cut the scale blocks of " + std::to_string(block) +
                                " (" + canonical_gemm_numerics(g) +
                                "); give pieces of whole blocks");
  }
  std::vector<float> acc;
  if (length >= o.k) {
    acc = piece(g, o, 0, o.k, threads);
  } else {
    acc.assign(outputs, 0.0f);
    for (int k0 = 0; k0 < o.k; k0 += length)
      add_into(acc, piece(g, o, k0, std::min(o.k, k0 + length), threads));
  }
  for (int i = 0; i < o.m; ++i) {
    for (int j = 0; j < o.n; ++j) {
      float& x = acc[static_cast<size_t>(i) * o.n + j];
      if (g.scaling != Scaling::kNone) {
        const float sa = value_at(o.scale_a, i), sb = value_at(o.scale_b, j);
        if (g.scale_order == ScaleOrder::kAlpha) {
          const float alpha = sa * sb;
          x = x * alpha;
        } else {
          const float scaled_b = x * sb;
          x = scaled_b * sa;
        }
      }
      if (!o.bias.empty()) x = x + o.bias[j];
    }
  }
  if (g.out != formats::fp32) {
    round_to_values<float>(acc, acc, BulkRounding{g.out, Rounding{}, RandomStream{}, 0, 1});
  }
  return acc;
}

}  // namespace simprec::gemm
