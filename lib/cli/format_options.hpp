// Command-line options shared by commands that round into a format.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "emulation/format.hpp"
#include "emulation/random.hpp"
#include "emulation/rounding_mode.hpp"

namespace simprec::cli {

struct FormatOptions {
  std::string format = "bf16";
  std::string rounding = "rne";
  int sr_bits = 32;
  uint64_t seed = 0;
  std::string overflow;  // empty: the format's default
  bool no_subnormals = false;

  void add_to(CLI::App& command);
  // The format with its policies applied; throws UsageError naming the bad value.
  Format resolved_format() const;
  Rounding resolved_rounding() const;
  RandomStream random_stream() const { return {seed, 0}; }
};

}  // namespace simprec::cli
