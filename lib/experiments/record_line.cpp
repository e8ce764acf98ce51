#include "lib/experiments/record_line.hpp"

#include "lib/limits/checksums.hpp"

namespace simprec::experiments {
namespace {

constexpr std::string_view kMemberStart = ",\"crc32\":\"";
constexpr size_t kHexDigits = 8;
// ,"crc32":"xxxxxxxx"}
constexpr size_t kSuffixBytes = kMemberStart.size() + kHexDigits + 2;

bool is_hex(std::string_view text) {
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

std::string record_line(const nlohmann::json& record) {
  // The checksum member is added by the writer alone: a record that carries one already
  // (read back and written again) gets a fresh one.
  nlohmann::json plain = record;
  if (plain.is_object()) plain.erase("crc32");
  // Invalid UTF-8 (a message quoting a file name) is replaced rather than refused: a record is
  // never lost to its text.
  std::string text = plain.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string crc = limits::crc32_hex(text);
  text.pop_back();  // the closing brace; dump() of an object always ends with it
  text += std::string(kMemberStart) + crc + "\"}\n";
  return text;
}

LineReading read_record_line(std::string_view line) {
  LineReading reading;
  nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded()) {
    reading.problem = "not JSON";
    return reading;
  }
  const bool has_member = record.is_object() && record.contains("crc32");
  if (!has_member) {
    reading.record = std::move(record);
    return reading;
  }
  // The member must be the line's last bytes, as the writer puts it.
  const auto damaged_member = [&] {
    reading.problem = "damaged: the crc32 member is not the line's last, as written";
    return reading;
  };
  if (line.size() < kSuffixBytes) return damaged_member();
  const size_t at = line.size() - kSuffixBytes;
  const std::string_view suffix = line.substr(at);
  const std::string_view digits = suffix.substr(kMemberStart.size(), kHexDigits);
  if (suffix.substr(0, kMemberStart.size()) != kMemberStart ||
      suffix.substr(kMemberStart.size() + kHexDigits) != "\"}" || !is_hex(digits))
    return damaged_member();
  std::string body(line.substr(0, at));
  body += '}';
  const std::string actual = limits::crc32_hex(body);
  if (actual != digits) {
    reading.problem = "damaged: its checksum " + std::string(digits) +
                      " does not match its contents (" + actual + ")";
    return reading;
  }
  record.erase("crc32");
  reading.record = std::move(record);
  return reading;
}

}  // namespace simprec::experiments
