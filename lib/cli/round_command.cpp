// simprec round: numbers from stdin, rounded once into a format, one result per line.
#include <cmath>
#include <iostream>
#include <string>

#include "emulation/exact_accumulator.hpp"
#include "emulation/parse.hpp"
#include "emulation/round.hpp"
#include "lib/cli/command.hpp"
#include "lib/cli/format_options.hpp"
#include "lib/cli/number_text.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::cli {
namespace {

// What rounding did to the inputs, for --report.
struct RoundingReport {
  long count = 0, exact = 0, up = 0, down = 0, non_finite = 0, overflowed = 0, saturated = 0,
       flushed = 0;
  double sum_signed_ulps = 0, sum_abs_ulps = 0, max_abs_ulps = 0;

  void add(const Format& f, const Unrounded& exact_value, double result) {
    ++count;
    if (exact_value.kind == Unrounded::Kind::kNan ||
        exact_value.kind == Unrounded::Kind::kInfinity) {
      ++non_finite;
      return;
    }
    if (!std::isfinite(result)) {
      ++overflowed;
      return;
    }
    // error = result - exact, computed exactly, then rounded to a double for the summary.
    ExactAccumulator acc;
    acc.add(result);
    Unrounded negated = exact_value;
    negated.negative = !negated.negative;
    acc.add(negated);
    const Unrounded diff = acc.exact_sum();
    const double error = decode(formats::fp64, round_to_format(formats::fp64, diff, {}));
    if (error == 0) {
      ++exact;
      return;
    }
    const double magnitude =
        std::fabs(decode(formats::fp64, round_to_format(formats::fp64, exact_value, {})));
    const int binade = magnitude > 0 ? std::ilogb(magnitude) : f.emin();
    const double ulp = std::ldexp(1.0, std::max(binade, f.emin()) - f.mantissa_bits);
    if (std::fabs(result) == f.max_finite() && std::fabs(error) > ulp) {  // clamped, not rounded
      ++saturated;
      return;
    }
    (error > 0 ? up : down) += 1;
    if (result == 0) ++flushed;
    sum_signed_ulps += error / ulp;
    sum_abs_ulps += std::fabs(error) / ulp;
    max_abs_ulps = std::max(max_abs_ulps, std::fabs(error) / ulp);
  }

  void print(std::ostream& out, const Format& f, const Rounding& r) const {
    const long inexact = up + down;
    out << "# report: " << count << " values into " << f.name() << " with " << short_name(r.mode)
        << "\n# exact " << exact << ", rounded up " << up << ", rounded down " << down
        << ", non-finite inputs " << non_finite << ", overflowed " << overflowed << ", saturated "
        << saturated << ", underflowed to zero " << flushed << "\n";
    if (inexact > 0) {
      out << "# mean signed error " << shortest_text(sum_signed_ulps / inexact)
          << " ulp, mean |error| " << shortest_text(sum_abs_ulps / inexact) << " ulp, max |error| "
          << shortest_text(max_abs_ulps) << " ulp (over the values rounded within range)\n";
    }
  }
};

void run_round(const FormatOptions& options, bool report) {
  const Format format = options.resolved_format();
  const Rounding rounding = options.resolved_rounding();
  RoundingContext ctx(format, rounding, options.random_stream());
  RoundingReport summary;
  std::string line;
  long line_number = 0;
  while (std::getline(std::cin, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines
    Unrounded exact_value;
    try {
      exact_value = parse_exact(line);
    } catch (const std::invalid_argument&) {
      // Quoted in part and escaped: the line may be megabytes long or binary.
      throw UsageError("stdin line " + std::to_string(line_number) + ": '" + limits::excerpt(line) +
                       "' is not a number (expected decimal, hex float like 0x1.8p-3, inf, -inf "
                       "or nan)");
    }
    const uint64_t bits = ctx.round(exact_value);
    const double value = decode(format, bits);
    std::cout << hex_bits(bits, format.width()) << ' ' << shortest_text(value) << '\n';
    if (report) summary.add(format, exact_value, value);
  }
  if (report) summary.print(std::cout, format, rounding);
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto* command = app.add_subcommand(
      "round",
      "Round numbers read from stdin (one per line: decimal, hex float like 0x1.8p-3, inf, -inf, "
      "nan) once into a format. Prints per line the encoding in hex and the exact value.");
  auto options = std::make_shared<FormatOptions>();
  auto report = std::make_shared<bool>(false);
  options->add_to(*command);
  command->add_flag("--report", *report,
                    "after the values, print a summary (lines starting with '#'): how many were "
                    "exact, rounded up or down, and the mean signed error");
  command->callback([options, report] { run_round(*options, *report); });
});

}  // namespace
}  // namespace simprec::cli
