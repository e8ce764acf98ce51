#include "lib/attention/tensors.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace simprec::attention {
namespace {

void check_size(const std::vector<double>& x, int64_t expected, const char* name) {
  if (static_cast<int64_t>(x.size()) != expected) {
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(x.size()) +
                                " elements, the shape needs " + std::to_string(expected));
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      throw std::invalid_argument(std::string(name) + " has a non-finite value at flat index " +
                                  std::to_string(i));
    }
  }
}

}  // namespace

void AttentionInputs::validate() const {
  const AttentionShape& s = shape;
  if (s.batch < 1 || s.heads < 1 || s.nq < 1 || s.nk < 1 || s.d < 1 || s.dv < 1) {
    throw std::invalid_argument("attention shape must be positive in every dimension");
  }
  check_size(q, s.problems() * s.nq * s.d, "Q");
  check_size(k, s.problems() * s.nk * s.d, "K");
  check_size(v, s.problems() * s.nk * s.dv, "V");
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
