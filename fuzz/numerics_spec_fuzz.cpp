// The numerics spec reader (lib/attention/numerics_spec.hpp) on arbitrary text: long specs,
// repeated and nested items, bad formats, roundings and numbers. Each input is refused with
// std::invalid_argument or gives a configuration; a configuration's canonical text must read back
// as the same configuration (the canonical form is what every result carries to be re-run), and
// the requirement checks `simprec numerics` and every run apply either refuse it with
// std::invalid_argument or pass. Texts ending in ".toml" name files and are not read: the
// file reader is the checked reader the other targets cover.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "emulation/format.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.ends_with(".toml")) return 0;
  using namespace simprec;
  attention::AttentionConfig config;
  try {
    config = attention::parse_numerics(text, formats::bf16);
  } catch (const std::invalid_argument&) {
    return 0;  // refused, with a message
  }
  const std::string canonical = attention::canonical_numerics(config);
  const auto again = attention::parse_numerics(canonical, formats::bf16);
  if (attention::canonical_numerics(again) != canonical) std::abort();
  try {
    attention::check_requirements(config);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
