#include "lib/attention/row_sum_diagnosis.hpp"

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

namespace simprec::attention {
namespace {

std::string shortest(double v) {
  char buffer[32];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

std::string of_rows(int64_t k, int64_t rows) {
  return std::to_string(k) + " of " + std::to_string(rows) + " row" + (rows == 1 ? "" : "s");
}

}  // namespace

RowSumDiagnosis diagnose_row_sums(const AttentionOutputs& outputs, const AttentionConfig& config) {
  RowSumDiagnosis d;
  d.rows = static_cast<int64_t>(outputs.row_sum.size());
  const bool reciprocal =
      config.flash() && !config.flash_state->normalised() && config.norm.is("reciprocal");
  // 1/l overflows where it exceeds the largest finite value by half an ulp or more; the test
  // in double is exact for l whose reciprocal is not within 2^-53 of that boundary.
  const Format& norm = config.site(Site::kONorm).format;
  const double overflow_at =
      norm.max_finite() + std::ldexp(1.0, norm.emax() - norm.mantissa_bits - 1);
  for (double l : outputs.row_sum) {
    d.zero += l == 0;
    d.infinite += std::isinf(l);
    d.nan += std::isnan(l);
    d.reciprocal_overflow += reciprocal && l > 0 && 1 / l >= overflow_at;
  }
  std::string cause;
  const auto add = [&cause](const std::string& part) {
    cause += (cause.empty() ? "" : "; ") + part;
  };
  if (d.zero > 0) {
    const std::string where = " to 0 in " + of_rows(d.zero, d.rows) + ", whose O is 0/0 = NaN";
    if (config.beta_rowmax.enabled) {
      add("beta-rowmax's shift (beta = " + shortest(config.beta_rowmax.beta) +
          ") underflowed the row sum" + where);
    } else {
      add("every exp of the row underflowed: the row sum fell" + where);
    }
  }
  if (d.reciprocal_overflow > 0) {
    const std::string where = " in " + of_rows(d.reciprocal_overflow, d.rows) +
                              ", whose O is infinite (or NaN where O sums to 0)";
    add((config.beta_rowmax.enabled
             ? "beta-rowmax's shift (beta = " + shortest(config.beta_rowmax.beta) +
                   ") left the row sum so small that 1/l overflowed " + norm.name()
             : "the row sum is so small that 1/l overflowed " + norm.name()) +
        where);
  }
  if (d.infinite > 0) add("the row sum overflowed to infinity in " + of_rows(d.infinite, d.rows));
  if (d.nan > 0) add("the row sum is NaN (a NaN or infinite score) in " + of_rows(d.nan, d.rows));
  d.cause = cause;
  return d;
}

nlohmann::json to_json(const RowSumDiagnosis& d) {
  return {{"rows", d.rows},
          {"zero", d.zero},
          {"infinite", d.infinite},
          {"nan", d.nan},
          {"reciprocal_overflow", d.reciprocal_overflow},
          {"cause", d.cause}};
}

}  // namespace simprec::attention
