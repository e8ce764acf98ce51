#include "emulation/accumulation.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

#include "emulation/arithmetic.hpp"
#include "emulation/did_you_mean.hpp"
#include "emulation/exact_accumulator.hpp"
#include "emulation/excerpt.hpp"
#include "emulation/tensor_core.hpp"

namespace simprec {
namespace {

void check_lengths(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size()) {
    throw std::invalid_argument("dot: operands have " + std::to_string(a.size()) + " and " +
                                std::to_string(b.size()) + " elements");
  }
}

// round(x + y*z) with the product exact: one rounding.
double fused(RoundingContext& ctx, double x, double y, double z) {
  return decode(ctx.format(),
                ctx.round(exact_fma(unrounded_from_double(y), unrounded_from_double(z),
                                    unrounded_from_double(x), ctx.rounding().mode)));
}

double rounded_sum(RoundingContext& ctx, double x, double y) {
  return decode(ctx.format(), ctx.round(exact_add(unrounded_from_double(x),
                                                  unrounded_from_double(y), ctx.rounding().mode)));
}

double pairwise(RoundingContext& ctx, std::span<const double> v) {
  if (v.size() == 1) return v[0];
  const size_t half = v.size() / 2;
  const double left = pairwise(ctx, v.first(half));
  const double right = pairwise(ctx, v.subspan(half));
  return rounded_sum(ctx, left, right);
}

std::vector<double> rounded_products(std::span<const double> a, std::span<const double> b,
                                     RoundingContext& ctx) {
  std::vector<double> p(a.size());
  // round(a*b) alone: adding +0 as in fused() would turn a -0 product into +0.
  for (size_t i = 0; i < a.size(); ++i) {
    p[i] = decode(ctx.format(),
                  ctx.round(exact_mul(unrounded_from_double(a[i]), unrounded_from_double(b[i]))));
  }
  return p;
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::function<std::unique_ptr<Accumulation>()>, std::less<>> makers;
  Registry() {
    makers["sequential"] = [] { return std::make_unique<SequentialAccumulation>(); };
    makers["pairwise"] = [] { return std::make_unique<PairwiseAccumulation>(); };
    makers["kahan"] = [] { return std::make_unique<KahanAccumulation>(); };
    makers["exact"] = [] { return std::make_unique<ExactAccumulation>(); };
    for (auto& [name, make] : tensor_core_accumulations()) makers[name] = std::move(make);
  }
};
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

double Accumulation::sum(std::span<const double> terms, double init, RoundingContext& ctx) const {
  const std::vector<double> ones(terms.size(), 1.0);
  return dot(terms, ones, init, ctx);
}

double SequentialAccumulation::dot(std::span<const double> a, std::span<const double> b, double c,
                                   RoundingContext& ctx) const {
  check_lengths(a, b);
  double acc = decode(ctx.format(), ctx.round(c));
  for (size_t i = 0; i < a.size(); ++i) acc = fused(ctx, acc, a[i], b[i]);
  return acc;
}

double PairwiseAccumulation::dot(std::span<const double> a, std::span<const double> b, double c,
                                 RoundingContext& ctx) const {
  check_lengths(a, b);
  const double c_rounded = decode(ctx.format(), ctx.round(c));
  if (a.empty()) return c_rounded;
  const std::vector<double> p = rounded_products(a, b, ctx);
  return rounded_sum(ctx, pairwise(ctx, p), c_rounded);
}

double KahanAccumulation::dot(std::span<const double> a, std::span<const double> b, double c,
                              RoundingContext& ctx) const {
  check_lengths(a, b);
  double sum = decode(ctx.format(), ctx.round(c));
  double compensation = 0.0;
  for (const double p : rounded_products(a, b, ctx)) {
    const double y = rounded_sum(ctx, p, -compensation);
    const double t = rounded_sum(ctx, sum, y);
    compensation = rounded_sum(ctx, rounded_sum(ctx, t, -sum), -y);
    sum = t;
  }
  return sum;
}

double ExactAccumulation::dot(std::span<const double> a, std::span<const double> b, double c,
                              RoundingContext& ctx) const {
  check_lengths(a, b);
  ExactAccumulator acc;
  acc.add(c);
  for (size_t i = 0; i < a.size(); ++i) acc.add_product(a[i], b[i]);
  Unrounded exact = acc.exact_sum();
  // An exactly zero sum has the sign IEEE 754 gives it: -0 only if every term was -0 (or in
  // round-down mode); a sum of signed zeros is the common case (c = -0, no terms).
  if (exact.kind == Unrounded::Kind::kZero) {
    // Signed zeros as a chain of IEEE additions gives them: -0 when every term is -0, +0 when
    // every term is +0, otherwise (mixed zeros, or cancelling terms) -0 only in round-down.
    const auto term_sign = [&](size_t i) { return std::signbit(a[i]) != std::signbit(b[i]); };
    const auto term_zero = [&](size_t i) { return a[i] == 0 || b[i] == 0; };
    bool all_negative_zero = c == 0 && std::signbit(c);
    bool all_positive_zero = c == 0 && !std::signbit(c);
    for (size_t i = 0; i < a.size(); ++i) {
      all_negative_zero &= term_zero(i) && term_sign(i);
      all_positive_zero &= term_zero(i) && !term_sign(i);
    }
    exact.negative =
        all_negative_zero || (!all_positive_zero && ctx.rounding().mode == RoundingMode::kDown);
  }
  return decode(ctx.format(), ctx.round(exact));
}

std::unique_ptr<Accumulation> make_accumulation(std::string_view name) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.makers.find(name); it != r.makers.end()) return it->second();
  std::string known;
  std::vector<std::string> names;
  for (const auto& [n, _] : r.makers) {
    known += (known.empty() ? "" : " ") + n;
    names.push_back(n);
  }
  throw std::invalid_argument("unknown accumulation model '" + excerpt(name) + "'" +
                              did_you_mean(name, names) + ": expected one of " + known);
}

void register_accumulation(std::string name, std::function<std::unique_ptr<Accumulation>()> make) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.makers[std::move(name)] = std::move(make);
}

std::vector<std::string> accumulation_names() {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [n, _] : r.makers) names.push_back(n);
  return names;
}

}  // namespace simprec
