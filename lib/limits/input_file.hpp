// Input files are checked to be regular files before they are opened: a FIFO would block the
// open until a writer comes, and a directory or device would fail later with a misleading error.
#pragma once

#include <cstdint>
#include <filesystem>

namespace simprec::limits {

// Throws std::runtime_error "PATH: not a regular file (a directory)" (or FIFO, device, socket),
// "PATH: no such file" or the system's reason; returns the file's size in bytes.
uint64_t require_regular_file(const std::filesystem::path& path);

}  // namespace simprec::limits
