// The one way simprec opens a file for reading. The file is opened without blocking (a FIFO or
// a device would otherwise wait for a writer, or never end) and the opened file itself, not its
// name, must be a regular file; its size is known, and bounded, before anything is parsed.
// Every refusal names the file, what it is and what was expected.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace simprec::limits {

// Size bounds of the files simprec reads whole (their text is parsed in memory).
inline constexpr uint64_t kMaxTomlBytes = uint64_t{16} << 20;    // experiment and numerics
inline constexpr uint64_t kMaxJsonBytes = uint64_t{64} << 20;    // experiment.json, messages
inline constexpr uint64_t kMaxRecordsBytes = uint64_t{2} << 30;  // results.jsonl

class InputFile {
 public:
  // Opens `path`; `expected` says what it should be, for messages ("an experiment file (TOML)").
  // Throws std::runtime_error: "PATH: no such file", "PATH: not a regular file (a FIFO);
  // expected EXPECTED", "PATH: cannot read: REASON".
  InputFile(const std::filesystem::path& path, std::string_view expected);
  // Opens `name` inside the folder open as `folder_fd`, without following a symbolic link
  // (files of a results folder); `path` is for messages.
  InputFile(int folder_fd, const std::string& name, const std::filesystem::path& path,
            std::string_view expected);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  // Reads exactly `bytes` bytes at `offset`; throws when the file holds fewer.
  void read_at(uint64_t offset, void* buffer, size_t bytes) const;
  // The whole file; throws naming its size and the bound when it is larger than `max_bytes`.
  std::string read_all(uint64_t max_bytes) const;
  // The file in pieces of at most `chunk` bytes, without holding it in memory (digests).
  template <class Consume>
  void for_each_chunk(size_t chunk, Consume&& consume) const;

 private:
  void check_opened(std::string_view expected);

  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

template <class Consume>
void InputFile::for_each_chunk(size_t chunk, Consume&& consume) const {
  std::string buffer(chunk, '\0');
  for (uint64_t offset = 0; offset < size_; offset += chunk) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, size_ - offset));
    read_at(offset, buffer.data(), n);
    consume(std::string_view(buffer.data(), n));
  }
}

// The whole of a regular file of at most `max_bytes` bytes (InputFile's checks and messages).
std::string read_text_file(const std::filesystem::path& path, uint64_t max_bytes,
                           std::string_view expected);

}  // namespace simprec::limits
