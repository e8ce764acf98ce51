// Accumulation models: how a sum or a dot product c + sum_i a_i*b_i is rounded on its way.
// All round in the format and mode of the context they are given. Products a_i*b_i enter
// exactly (as in a fused multiply-add); tensor-core models plug in through the same interface.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emulation/round.hpp"

namespace simprec {

class Accumulation {
 public:
  virtual ~Accumulation() = default;
  virtual std::string name() const = 0;
  // c + sum_i a[i]*b[i], as a value of ctx.format(). a and b have the same length.
  virtual double dot(std::span<const double> a, std::span<const double> b, double c,
                     RoundingContext& ctx) const = 0;
  // init + sum_i terms[i].
  virtual double sum(std::span<const double> terms, double init, RoundingContext& ctx) const;
};

// acc <- round(acc + a_i*b_i), i in order: one rounding per term.
class SequentialAccumulation final : public Accumulation {
 public:
  std::string name() const override { return "sequential"; }
  double dot(std::span<const double> a, std::span<const double> b, double c,
             RoundingContext& ctx) const override;
};

// Products rounded to the format, then summed as a balanced binary tree with a rounding at
// every node; c is added last.
class PairwiseAccumulation final : public Accumulation {
 public:
  std::string name() const override { return "pairwise"; }
  double dot(std::span<const double> a, std::span<const double> b, double c,
             RoundingContext& ctx) const override;
};

// Kahan-compensated summation of the rounded products, every operation rounded in the format.
class KahanAccumulation final : public Accumulation {
 public:
  std::string name() const override { return "kahan"; }
  double dot(std::span<const double> a, std::span<const double> b, double c,
             RoundingContext& ctx) const override;
};

// The exact result, rounded once.
class ExactAccumulation final : public Accumulation {
 public:
  std::string name() const override { return "exact"; }
  double dot(std::span<const double> a, std::span<const double> b, double c,
             RoundingContext& ctx) const override;
};

// Models by name ("sequential", "pairwise", "kahan", "exact", and whatever has been
// registered, such as tensor-core models). Throws std::invalid_argument listing the names.
std::unique_ptr<Accumulation> make_accumulation(std::string_view name);
void register_accumulation(std::string name, std::function<std::unique_ptr<Accumulation>()> make);
std::vector<std::string> accumulation_names();

}  // namespace simprec
