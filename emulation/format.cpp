#include "emulation/format.hpp"
#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"

#include <charconv>
#include <stdexcept>

namespace simprec {
namespace {

constexpr NamedFormat kNamedFormats[] = {
    {"bf16", formats::bf16},         {"fp16", formats::fp16},
    {"tf32", formats::tf32},         {"fp32", formats::fp32},
    {"fp64", formats::fp64},         {"e4m3fn", formats::e4m3fn},
    {"e5m2", formats::e5m2},         {"e4m3fnuz", formats::e4m3fnuz},
    {"e5m2fnuz", formats::e5m2fnuz}, {"fp6_e2m3", formats::fp6_e2m3},
    {"fp6_e3m2", formats::fp6_e3m2}, {"fp4_e2m1", formats::fp4_e2m1},
    {"e8m0", formats::e8m0},
};

struct Alias {
  std::string_view alias;
  std::string_view name;
};
constexpr Alias kAliases[] = {{"bfloat16", "bf16"},
                              {"half", "fp16"},
                              {"float16", "fp16"},
                              {"float", "fp32"},
                              {"float32", "fp32"},
                              {"single", "fp32"},
                              {"double", "fp64"},
                              {"float64", "fp64"},
                              // ml_dtypes' and PTX's names of the OCP MX formats
                              {"float6_e2m3fn", "fp6_e2m3"},
                              {"float6_e3m2fn", "fp6_e3m2"},
                              {"float4_e2m1fn", "fp4_e2m1"},
                              {"float8_e8m0fnu", "e8m0"},
                              {"ue8m0", "e8m0"}};

// Reads a decimal number at the front of `text`, advancing it; -1 when there is none.
int take_number(std::string_view& text) {
  int value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{}) return -1;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return value;
}

// "eXmY", "eXmYfn", "eXmYfnuz" or "eXmYfinite" with the same default policies as the
// OCP/fnuz/MX formats.
bool parse_exmy(std::string_view text, Format& out) {
  if (text.empty() || text.front() != 'e') return false;
  text.remove_prefix(1);
  const int e = take_number(text);
  if (e < 0 || text.empty() || text.front() != 'm') return false;
  text.remove_prefix(1);
  const int m = take_number(text);
  if (m < 0 || e > 30 || m > 62) return false;
  if (e == 0) {
    // No bias 2^(e-1) to compute (a negative shift); validate() refuses it with a message.
    out = Format{};
    out.exponent_bits = 0;
    out.mantissa_bits = m;
    return text.empty() || text == "fn" || text == "fnuz";
  }
  if (text.empty()) {
    out = ieee_format(e, m);
  } else if (text == "fn") {
    out = Format{e,
                 m,
                 (1 << (e - 1)) - 1,
                 SpecialEncoding::kFiniteNan,
                 OverflowPolicy::kNan,
                 SubnormalPolicy::kKeep};
  } else if (text == "fnuz") {
    out = Format{e,
                 m,
                 1 << (e - 1),
                 SpecialEncoding::kUnsignedZero,
                 OverflowPolicy::kNan,
                 SubnormalPolicy::kKeep};
  } else if (text == "finite") {
    out = Format{e,
                 m,
                 (1 << (e - 1)) - 1,
                 SpecialEncoding::kNone,
                 OverflowPolicy::kSaturate,
                 SubnormalPolicy::kKeep};
  } else {
    return false;
  }
  return true;
}

std::string_view special_suffix(SpecialEncoding s) {
  switch (s) {
    case SpecialEncoding::kIeee:
      return "";
    case SpecialEncoding::kFiniteNan:
      return "fn";
    case SpecialEncoding::kUnsignedZero:
      return "fnuz";
    case SpecialEncoding::kNone:
      return "finite";
    case SpecialEncoding::kExponentOnly:
      return "";
  }
  return "";
}

// The overflow policy a format of this encoding has unless told otherwise.
OverflowPolicy default_overflow(SpecialEncoding s) {
  switch (s) {
    case SpecialEncoding::kIeee:
      return OverflowPolicy::kInfinity;
    case SpecialEncoding::kNone:
      return OverflowPolicy::kSaturate;
    default:
      return OverflowPolicy::kNan;
  }
}

}  // namespace

std::string_view overflow_name(OverflowPolicy p) {
  switch (p) {
    case OverflowPolicy::kInfinity:
      return "inf";
    case OverflowPolicy::kSaturate:
      return "saturate";
    case OverflowPolicy::kNan:
      return "nan";
  }
  return "?";
}

std::string_view subnormals_name(const Format& format) {
  if (!format.has_sign()) return "none";
  return format.keeps_subnormals() ? "kept" : "flushed";
}

std::string_view special_encoding_name(SpecialEncoding s) {
  switch (s) {
    case SpecialEncoding::kIeee:
      return "ieee";
    case SpecialEncoding::kFiniteNan:
      return "nan-only(all-ones)";
    case SpecialEncoding::kUnsignedZero:
      return "nan-only(0x80..,no-0)";
    case SpecialEncoding::kNone:
      return "none";
    case SpecialEncoding::kExponentOnly:
      return "nan(all-ones),unsigned";
  }
  return "?";
}

const NamedFormat* named_formats_begin() {
  return std::begin(kNamedFormats);
}
const NamedFormat* named_formats_end() {
  return std::end(kNamedFormats);
}

std::string Format::validate() const {
  if (exponent_bits < 2 || exponent_bits > 11) {
    return "exponent bits must be 2..11 (the value must fit in a double), got " +
           std::to_string(exponent_bits);
  }
  if (special == SpecialEncoding::kExponentOnly) {
    if (mantissa_bits != 0) {
      return "an exponent-only format has no mantissa bits, got " + std::to_string(mantissa_bits);
    }
    if (!keeps_subnormals()) return "an exponent-only format has no subnormals to flush";
  } else if (mantissa_bits < 1 || mantissa_bits > 52) {
    return "mantissa bits must be 1..52, got " + std::to_string(mantissa_bits);
  }
  if (emax() > 1023 || emin() - mantissa_bits < -1074) {
    return "exponent range [" + std::to_string(emin()) + ", " + std::to_string(emax()) +
           "] does not fit in a double";
  }
  if (emax() < emin()) return "bias " + std::to_string(bias) + " leaves no normal numbers";
  if (overflow == OverflowPolicy::kInfinity && !has_infinity()) {
    return "overflow to infinity asked for a format without infinity (expected saturate" +
           std::string(has_nan() ? " or nan)" : ")");
  }
  if (overflow == OverflowPolicy::kNan && !has_nan()) {
    return "overflow to NaN asked for a format without NaN (expected saturate)";
  }
  return {};
}

std::string Format::name() const {
  Format plain = *this;
  plain.overflow = default_overflow(special);
  plain.subnormals = SubnormalPolicy::kKeep;
  std::string result;
  for (const auto& named : kNamedFormats) {
    if (named.format == plain) result = named.name;
  }
  if (result.empty()) {
    result = "e" + std::to_string(exponent_bits) + "m" + std::to_string(mantissa_bits) +
             std::string(special_suffix(special));
    Format parsed;
    if (!parse_exmy(result, parsed) || parsed.bias != bias)
      result += ":bias" + std::to_string(bias);
  }
  if (overflow != plain.overflow) result += ":" + std::string(overflow_name(overflow));
  if (!keeps_subnormals()) result += ":ftz";
  return result;
}

void require_sign(const Format& format, std::string_view use) {
  if (format.has_sign()) return;
  throw std::invalid_argument("format " + format.name() + " has no sign, so it cannot hold " +
                              std::string(use) + " (expected a signed format; " + format.name() +
                              " is a scale format, see simprec quantize)");
}

Format parse_format(std::string_view text) {
  // "F:ftz", as Format::name writes a format that flushes subnormals.
  constexpr std::string_view kFlush = ":ftz";
  if (text.size() > kFlush.size() && text.substr(text.size() - kFlush.size()) == kFlush) {
    Format f = parse_format(text.substr(0, text.size() - kFlush.size()));
    f.subnormals = SubnormalPolicy::kFlush;
    if (auto problem = f.validate(); !problem.empty()) {
      throw std::invalid_argument("format '" + excerpt(text) + "': " + problem);
    }
    return f;
  }
  std::string_view name = text;
  for (const auto& a : kAliases) {
    if (a.alias == text) name = a.name;
  }
  for (const auto& named : kNamedFormats) {
    if (named.name == name) return named.format;
  }
  Format f;
  if (parse_exmy(name, f)) {
    if (auto problem = f.validate(); !problem.empty()) {
      throw std::invalid_argument("format '" + excerpt(text) + "': " + problem);
    }
    return f;
  }
  std::vector<std::string> names;
  for (const auto& named : kNamedFormats) names.emplace_back(named.name);
  for (const auto& a : kAliases) names.emplace_back(a.alias);
  throw std::invalid_argument("unknown format '" + excerpt(text) + "'" + did_you_mean(text, names) +
                              ": expected one of bf16 fp16 tf32 fp32 fp64 e4m3fn e5m2 e4m3fnuz "
                              "e5m2fnuz fp6_e2m3 fp6_e3m2 fp4_e2m1 e8m0, or eXmY / eXmYfn / "
                              "eXmYfnuz / eXmYfinite");
}

}  // namespace simprec
