#include "lib/attention/input_quantization.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "emulation/arithmetic.hpp"
#include "emulation/round.hpp"

namespace simprec::attention {
namespace {

double rounded(const Format& f, const Unrounded& x) {
  return decode(f, round_to_format(f, x, Rounding{}));
}
Unrounded exact(double x) {
  return unrounded_from_double(x);
}
double div32(double a, double b) {
  return rounded(formats::fp32, jammed_div(exact(a), exact(b)));
}
double mul32(double a, double b) {
  return rounded(formats::fp32, exact_mul(exact(a), exact(b)));
}
double add32(double a, double b) {
  return rounded(formats::fp32, exact_add(exact(a), exact(b), RoundingMode::kNearestEven));
}

// The element format's quantisation of one group of values.
struct Element {
  const Format* format = nullptr;  // nullptr: int8
  double largest() const { return format ? format->max_finite() : 127.0; }
  double quantize(double x, double s) const {
    const double y = div32(x, s);
    if (format) return rounded(*format, exact(y));
    // SageAttention: x / scale, plus 0.5 with the sign of the quotient (+0.5 for +-0), then the
    // conversion to int8 that truncates toward zero.
    return std::trunc(add32(y, std::signbit(y) ? -0.5 : 0.5));
  }
};

// Quantises the values x[at(g, i)], i < size(g), of groups g < count, one scale per group into
// scales[g]; `pre` (when not 1) multiplies each value in fp32 first. Throws std::invalid_argument
// naming `tensor` when a value is not finite (an input beyond the input format's range).
template <class Size, class At>
void quantize_groups(std::vector<double>& x, int64_t groups, Size size, At at, const Element& e,
                     double pre, std::vector<double>& scales, const char* tensor) {
  scales.assign(groups, 1.0);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t n = size(g);
    double amax = 0;
    for (int64_t i = 0; i < n; ++i) {
      double& v = x[at(g, i)];
      if (pre != 1.0) v = mul32(v, pre);
      if (!std::isfinite(v)) {
        throw std::invalid_argument(std::string("quantising ") + tensor + ": a value is " +
                                    std::to_string(v) +
                                    " after the input site; expected finite values (an input "
                                    "beyond the input format's range?)");
      }
      amax = std::max(amax, std::fabs(v));
    }
    const double s = div32(amax, e.largest());
    if (s > 0) scales[g] = s;
    for (int64_t i = 0; i < n; ++i) x[at(g, i)] = e.quantize(x[at(g, i)], scales[g]);
  }
}

// Quantises a (problems x rows x cols) tensor by rows: one group over every problem (tensor),
// one per problem (head) or one per `block` rows of a problem (block).
void quantize_rows(std::vector<double>& x, int64_t problems, int64_t rows, int64_t cols,
                   QuantScale scale, int64_t block, const Element& e, double pre,
                   std::vector<double>& scales, int64_t& groups_per_problem, const char* tensor) {
  if (scale == QuantScale::kTensor) {
    groups_per_problem = 1;
    std::vector<double> one;
    quantize_groups(
        x, 1, [&](int64_t) { return problems * rows * cols; }, [](int64_t, int64_t i) { return i; },
        e, pre, one, tensor);
    scales.assign(problems, one[0]);
    return;
  }
  const int64_t per = scale == QuantScale::kBlock ? block : rows;
  groups_per_problem = (rows + per - 1) / per;
  // Group g = (problem, block); the last block of a problem may be partial.
  quantize_groups(
      x, problems * groups_per_problem,
      [&](int64_t g) {
        return (std::min(rows, (g % groups_per_problem + 1) * per) -
                (g % groups_per_problem) * per) *
               cols;
      },
      [&](int64_t g, int64_t i) {
        const int64_t p = g / groups_per_problem, b = g % groups_per_problem;
        return (p * rows + b * per) * cols + i;
      },
      e, pre, scales, tensor);
}

}  // namespace

void check_quantization(const AttentionConfig& config, bool gradients) {
  const InputQuantization& qz = config.quant;
  if (!qz.active()) return;
  const auto refuse = [](const std::string& why) {
    throw std::invalid_argument("the input quantisation (qk_quant, v_quant, k_smooth) " + why);
  };
  if (gradients) refuse("is for the forward pass: the backward pass would need dequantised inputs");
  // kv_splits=auto (0) is the dispatch's, decided with the run's shape.
  if (config.flash() && config.kv_splits != 1 && config.kv_splits != 0) {
    refuse("needs kv_splits=1, not " + std::to_string(config.kv_splits));
  }
  if (config.flash() && config.flash_state->normalised()) {
    refuse("needs flash_state=running");
  }
  if (qz.quantizes_qk() && !config.exp_impl->has_tag("folded-scale")) {
    std::string folded;
    for (const ExpArg* e : strategies_of<ExpArg>()) {
      if (e->has_tag("folded-scale"))
        folded += (folded.empty() ? "" : " or ") + std::string(e->name());
    }
    refuse("of Q and K folds its descale into the exp2 constant: it needs exp_impl " + folded +
           ", not " + std::string(config.exp_impl.name()));
  }
}

InputScales quantize_inputs(AttentionInputs& in, const AttentionConfig& config, double c) {
  const InputQuantization& qz = config.quant;
  InputScales out;
  const AttentionShape& s = in.shape;
  const int64_t problems = s.problems();
  if (qz.k_smooth) {
    // K minus the mean of its column over the keys: the mean as an fp32 running sum in key
    // order divided by Nk in fp32, rounded to the input format; the difference rounded once to
    // the input format.
    const Format& input = config.site(Site::kInput).format;
    for (int64_t p = 0; p < problems; ++p) {
      double* k = in.k.data() + p * s.nk * s.d;
      for (int64_t x = 0; x < s.d; ++x) {
        double sum = 0;
        for (int64_t j = 0; j < s.nk; ++j) sum = add32(sum, k[j * s.d + x]);
        const double mean = rounded(input, exact(div32(sum, static_cast<double>(s.nk))));
        for (int64_t j = 0; j < s.nk; ++j) {
          k[j * s.d + x] = rounded(
              input, exact_add(exact(k[j * s.d + x]), exact(-mean), RoundingMode::kNearestEven));
        }
      }
    }
  }
  if (qz.quantizes_qk()) {
    const Element e{qz.qk ? &*qz.qk : nullptr};
    const bool block = qz.qk_scale == QuantScale::kBlock;
    out.q_block = block ? config.block_rows : s.nq;
    out.k_block = block ? config.block_cols : s.nk;
    quantize_rows(in.q, problems, s.nq, s.d, qz.qk_scale, config.block_rows, e, block ? c : 1.0,
                  out.q, out.q_groups, "Q");
    quantize_rows(in.k, problems, s.nk, s.d, qz.qk_scale, config.block_cols, e, 1.0, out.k,
                  out.k_groups, "K");
  }
  if (qz.v) {
    const Element e{&*qz.v};
    if (qz.v_scale == QuantScale::kChannel) {
      out.v_groups = s.dv;
      quantize_groups(
          in.v, problems * s.dv, [&](int64_t) { return s.nk; },
          [&](int64_t g, int64_t j) { return ((g / s.dv) * s.nk + j) * s.dv + g % s.dv; }, e, 1.0,
          out.v, "V");
    } else {
      quantize_rows(in.v, problems, s.nk, s.dv, qz.v_scale, s.nk, e, 1.0, out.v, out.v_groups, "V");
    }
  }
  return out;
}

}  // namespace simprec::attention
