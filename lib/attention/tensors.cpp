#include "lib/attention/tensors.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "lib/limits/checked_arithmetic.hpp"

namespace simprec::attention {
namespace {

void check_size(const std::vector<double>& x, int64_t expected, const char* name) {
  if (static_cast<int64_t>(x.size()) != expected) {
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(x.size()) +
                                " elements, the shape needs " + std::to_string(expected));
  }
}

}  // namespace

void check_shape(const AttentionShape& s) {
  const std::pair<const char*, int64_t> dims[] = {{"B", s.batch}, {"H", s.heads}, {"Nq", s.nq},
                                                  {"Nk", s.nk},   {"d", s.d},     {"dv", s.dv}};
  for (const auto& [name, value] : dims) {
    if (value < 1 || value > kMaxDimension) {
      throw std::invalid_argument("attention shape: " + std::string(name) + " = " +
                                  std::to_string(value) + " is out of range [1, " +
                                  std::to_string(kMaxDimension) + "]");
    }
  }
  if (s.heads_kv < 0 || s.heads_kv > s.heads || s.heads % s.kv_heads() != 0) {
    throw std::invalid_argument("attention shape: " + std::to_string(s.heads_kv) +
                                " key/value heads for " + std::to_string(s.heads) +
                                " query heads (expected a divisor of the query heads)");
  }
  // Each tensor's size in bytes (as doubles) must fit in 64 bits, and so must a problem's
  // Nq x Nk scores.
  const std::string what = "attention tensor (elements x 8 bytes)";
  const std::pair<int64_t, int64_t> tensors[] = {
      {s.nq, s.d}, {s.nk, s.d}, {s.nk, s.dv}, {s.nq, s.dv}};
  for (const auto& [n, d] : tensors)
    limits::checked_product({s.batch, s.heads, n, d, int64_t{8}}, what);
  limits::checked_product({s.nq, s.nk, int64_t{8}}, "attention scores (Nq x Nk x 8 bytes)");
}

// NaN and infinite values are taken: the engine and the reference propagate them as their
// arithmetic does (loading from files refuses them, lib/inputs/generators.hpp).
void AttentionInputs::validate() const {
  const AttentionShape& s = shape;
  check_shape(s);
  check_size(q, s.problems() * s.nq * s.d, "Q");
  check_size(k, s.kv_problems() * s.nk * s.d, "K");
  check_size(v, s.kv_problems() * s.nk * s.dv, "V");
  if (!d_out.empty()) check_size(d_out, s.problems() * s.nq * s.dv, "dO");
  if (has_forward()) {
    if (d_out.empty()) {
      throw std::invalid_argument(
          "O and LSE are given without dO: there is no backward pass to run");
    }
    check_size(o, s.problems() * s.nq * s.dv, "O");
    check_size(lse, s.problems() * s.nq, "LSE");
  }
}

double softmax_scale(const AttentionConfig& config, const AttentionShape& shape) {
  return config.scale ? *config.scale : 1.0 / std::sqrt(static_cast<double>(shape.d));
}

}  // namespace simprec::attention
