// Checksums of bytes and of files, from liblzma (CRC-32 and CRC-64 as xz uses them): they catch
// every change of a few bits and any accidental change with near certainty; they are no defence
// against someone who forges a file on purpose.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace simprec::limits {

uint32_t crc32_of(std::string_view bytes);
// "crc32:" would be redundant where the field is named; eight lowercase hex digits.
std::string crc32_hex(std::string_view bytes);

// "crc64:<16 hex digits>:<size in bytes>" of a regular file's contents, read in pieces through
// InputFile (its refusals and messages); `expected` says what the file should be.
std::string file_digest(const std::filesystem::path& path, std::string_view expected);

}  // namespace simprec::limits
