// score_mod and mask_mod expressions (lib/attention/score_mod.hpp) from arbitrary text: each is
// refused with std::invalid_argument or compiled; a compiled one evaluates (its modification,
// its derivative, the mask) at a few points, where only a read outside the array or an integer
// fault may stop it (std::out_of_range), and an expression without either evaluates the same
// twice.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/attention/score_mod.hpp"

namespace {

using namespace simprec::attention;

using Exact = ExactScoreArithmetic;

bool same(double a, double b) {
  return std::isnan(a) ? std::isnan(b) : a == b;
}

const std::vector<ScoreModTensor>& tensors() {
  static const std::vector<ScoreModTensor> t{
      {"t", {2, 3}, {0.5, -1.0, 2.0, 0.25, 3.0, -0.75}, ScoreType::kFloat},
      {"n", {4}, {0, 1, 2, 3}, ScoreType::kInt}};
  return t;
}

void run(const ScoreProgram& p, const ScoreModPoint& at) {
  Exact arith;
  std::vector<double> scratch;
  try {
    const double first = evaluate(p, tensors(), at, arith, scratch);
    if (!same(first, evaluate(p, tensors(), at, arith, scratch))) std::abort();
  } catch (const std::out_of_range&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const ScoreModPoint points[] = {{0.75, 0.5, 0, 1, 2, 1, 0.25, -1.5},
                                  {-3.0, 0.125, 1, 0, 0, 3, 0.5, 2.0}};
  try {
    const ScoreMod m(text, tensors());
    for (const ScoreModPoint& at : points) {
      run(m.modification(), at);
      run(m.derivative(), at);
    }
  } catch (const std::invalid_argument&) {
  }
  try {
    const MaskMod mask(text, tensors());
    for (const ScoreModPoint& at : points) {
      try {
        mask.visible(at.b, at.h, at.q, at.kv);
      } catch (const std::out_of_range&) {
      }
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
