// One line of results.jsonl: a case record as one JSON object whose last member is a CRC-32 of
// the rest of the line,
//
//   {"case_id":"1712f1da1f4dadd6",...,"results":{...},"crc32":"0a1b2c3d"}
//
// where the checksum covers the line's bytes with `,"crc32":"..."` taken out, that is the record
// exactly as dumped. The check is on the bytes, so it does not depend on how a JSON library
// writes numbers back; the line is still plain JSON for jq and friends. Lines written before
// checksums existed (no such last member) are read as they always were.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace simprec::experiments {

// The line for a record, with its checksum and the newline.
std::string record_line(const nlohmann::json& record);

// The record a line holds (without its checksum member), or the reason it holds none: "not
// JSON", "damaged: its checksum 0a1b2c3d does not match its contents (8f7e6d5c)".
struct LineReading {
  std::optional<nlohmann::json> record;
  std::string problem;
};
LineReading read_record_line(std::string_view line);

}  // namespace simprec::experiments
