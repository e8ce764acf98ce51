// parse_exact (emulation/parse.hpp) on arbitrary text: it refuses it with
// std::invalid_argument or returns a value, which rounded to the nearest double is what glibc's
// correctly rounded strtod reads from the same text (an oracle that shares no code with MPFR's
// reader) wherever strtod reads all of it. And any double printed by the CLI's shortest_text
// (lib/cli/number_text.hpp) reads back as the same double.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "emulation/format.hpp"
#include "emulation/parse.hpp"
#include "emulation/round.hpp"
#include "lib/cli/number_text.hpp"

namespace {

double nearest_double(const simprec::Unrounded& value) {
  return simprec::decode(simprec::formats::fp64,
                         simprec::round_to_format(simprec::formats::fp64, value, {}));
}

bool same_double(double a, double b) {
  return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, sizeof a) == 0;
}

void check_against_strtod(std::string_view text) {
  double parsed;
  try {
    parsed = nearest_double(simprec::parse_exact(text));
  } catch (const std::invalid_argument&) {
    return;  // refused with a message
  }
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  const std::string trimmed(text.substr(first, last - first + 1));
  char* end = nullptr;
  const double expected = std::strtod(trimmed.c_str(), &end);
  if (end != trimmed.c_str() + trimmed.size()) return;  // a form strtod does not read whole
  if (!same_double(parsed, expected)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_against_strtod(std::string_view(reinterpret_cast<const char*>(data), size));
  if (size >= 8) {
    double x;
    std::memcpy(&x, data, sizeof x);
    const double back = nearest_double(simprec::parse_exact(simprec::cli::shortest_text(x)));
    if (!same_double(x, back)) std::abort();
  }
  return 0;
}
