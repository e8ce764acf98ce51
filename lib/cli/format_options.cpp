#include "lib/cli/format_options.hpp"

#include "lib/cli/command.hpp"
#include "lib/cli/seed_option.hpp"

namespace simprec::cli {

void FormatOptions::add_to(CLI::App& command) {
  command
      .add_option("--format,-f", format,
                  "bf16 fp16 tf32 fp32 fp64 e4m3fn e5m2 e4m3fnuz e5m2fnuz fp6_e2m3 fp6_e3m2 "
                  "fp4_e2m1 e8m0, or eXmY[fn|fnuz|finite]")
      ->required();
  command
      .add_option("--rounding,-r", rounding,
                  "rne rna rtz rup rdn rto sr rnr (or nearest-even, nearest-away, toward-zero, "
                  "up, down, odd, stochastic, nearest-random-ties)")
      ->required();
  command.add_option("--sr-bits", sr_bits, "random bits for stochastic rounding (1..32)")
      ->capture_default_str();
  add_seed_option(command, seed, "random seed for sr and rnr");
  command.add_option("--overflow", overflow,
                     "what overflow gives: inf, saturate or nan (default: the format's own)");
  command.add_flag("--no-subnormals", no_subnormals,
                   "flush subnormal results (and inputs) to zero");
}

Format FormatOptions::resolved_format() const {
  Format f;
  try {
    f = parse_format(format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (overflow == "inf") {
    f.overflow = OverflowPolicy::kInfinity;
  } else if (overflow == "saturate") {
    f.overflow = OverflowPolicy::kSaturate;
  } else if (overflow == "nan") {
    f.overflow = OverflowPolicy::kNan;
  } else if (!overflow.empty()) {
    throw UsageError("--overflow '" + overflow + "': expected inf, saturate or nan");
  }
  if (no_subnormals) f.subnormals = SubnormalPolicy::kFlush;
  if (auto problem = f.validate(); !problem.empty()) {
    throw UsageError("format '" + format + "'" +
                     (overflow.empty() ? "" : " with --overflow " + overflow) + ": " + problem);
  }
  return f;
}

Rounding FormatOptions::resolved_rounding() const {
  Rounding r;
  try {
    r.mode = parse_rounding_mode(rounding);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (sr_bits < 1 || sr_bits > 32) {
    throw UsageError("--sr-bits " + std::to_string(sr_bits) + ": expected 1..32");
  }
  r.sr_bits = sr_bits;
  return r;
}

}  // namespace simprec::cli
