// simprec formats: the formats and their limits.
#include <cstdio>
#include <string>

#include "emulation/format.hpp"
#include "lib/cli/command.hpp"
#include "lib/cli/number_text.hpp"

namespace simprec::cli {
namespace {

void print_row(const std::string& name, const Format& f) {
  std::printf("%-10s %5d %4d %4d %5d  %-24s %-24s %-24s %-24s %-10s %-22s %s\n", name.c_str(),
              f.width(), f.exponent_bits, f.mantissa_bits, f.bias,
              shortest_text(f.max_finite()).c_str(), shortest_text(f.min_normal()).c_str(),
              shortest_text(f.min_subnormal()).c_str(), shortest_text(f.epsilon()).c_str(),
              std::string(overflow_name(f.overflow)).c_str(),
              std::string(special_encoding_name(f.special)).c_str(),
              std::string(subnormals_name(f)).c_str());
}

void run_formats(const std::string& only) {
  std::printf("%-10s %5s %4s %4s %5s  %-24s %-24s %-24s %-24s %-10s %-22s %s\n", "format", "bits",
              "exp", "man", "bias", "max_finite", "min_normal", "min_subnormal", "epsilon",
              "overflow", "nan/inf", "subnormals");
  if (!only.empty()) {
    try {
      const Format f = parse_format(only);
      print_row(f.name(), f);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    return;
  }
  for (auto* it = named_formats_begin(); it != named_formats_end(); ++it) {
    print_row(std::string(it->name), it->format);
  }
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto* command = app.add_subcommand("formats", "List the formats with their limits.");
  auto only = std::make_shared<std::string>();
  command->add_option("format", *only, "show only this format (any eXmY[fn|fnuz|finite] too)");
  command->callback([only] { run_formats(*only); });
});

}  // namespace
}  // namespace simprec::cli
