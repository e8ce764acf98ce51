// The one way simprec writes files. A folder is opened once; every file and subfolder inside it
// is reached from that open folder without following a symbolic link (O_NOFOLLOW), so that a
// link planted in a results folder (stats.json -> /etc/passwd) is never written through. Whole
// files are written to a new temporary file in the same folder and renamed over the name: a
// reader sees the old file or the new one, never half of one, and a link at the name is replaced,
// not followed. The folder itself is the user's choice and may be reached through a link.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "lib/limits/input_file.hpp"

namespace simprec::limits {

class OutputFolder {
 public:
  // Opens `dir`, creating it and its parents when `create` and it is missing. Throws
  // std::runtime_error naming the folder and the reason.
  explicit OutputFolder(const std::filesystem::path& dir, bool create = true);
  // The subfolder `name` of `parent`, created when missing; a link there is refused.
  OutputFolder(const OutputFolder& parent, const std::string& name);
  ~OutputFolder();
  OutputFolder(OutputFolder&& other) noexcept;
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int fd() const { return fd_; }

  // Replaces the file `name` with `bytes` (temporary file renamed over it); with `durable` the
  // bytes are on disk before the rename (records a power loss must not take).
  void write_file(const std::string& name, std::string_view bytes, bool durable = false) const;
  // Opens the regular file `name` with `flags` (O_CREAT etc.; O_NOFOLLOW and O_CLOEXEC are
  // added) and returns the descriptor; a link, FIFO, directory or device is refused.
  int open_file(const std::string& name, int flags) const;
  // Reads the regular file `name` (not through a link).
  InputFile read_file(const std::string& name, std::string_view expected) const;
  // Whether `name` exists (a link counts, whatever it points to).
  bool contains(const std::string& name) const;
  // Renames `from` to `to` inside the folder; never replaces an existing `to`. Returns false
  // when `to` exists.
  bool move_without_replacing(const std::string& from, const std::string& to) const;
  // Removes the file `name` when it exists (a link is removed, not what it points to).
  void remove_file(const std::string& name) const;

 private:
  OutputFolder(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

// A file being written: bytes go to a fresh temporary file in the folder, and commit() renames it
// over `name`; without commit() (an exception on the way) the temporary file is removed.
class ReplacingFile {
 public:
  ReplacingFile(const OutputFolder& folder, std::string name);
  ~ReplacingFile();
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;

  void write(const void* data, size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // The temporary file's path, for a program that writes the file itself (gnuplot).
  std::filesystem::path temporary_path() const { return folder_.path() / temporary_; }
  // Renames the file into place; with `durable`, after flushing it to disk.
  void commit(bool durable = false);

 private:
  [[noreturn]] void fail(const std::string& what);
  const OutputFolder& folder_;
  std::string name_, temporary_;
  int fd_ = -1;
};

// The folder that holds `file` (its parent, or the current folder), opened without creating it.
OutputFolder folder_of(const std::filesystem::path& file);

// Replaces `file` with `bytes` (OutputFolder::write_file in the file's folder).
void write_file_replacing(const std::filesystem::path& file, std::string_view bytes);

// Why `value` cannot be given as --OPTION naming an output file or folder (empty when it can):
// empty, only spaces, or holding control characters or more than 4096 bytes.
std::string output_path_problem(std::string_view value);
// Throws std::invalid_argument "--OPTION 'VALUE': PROBLEM" when output_path_problem finds one.
void check_output_path(std::string_view option, std::string_view value);

}  // namespace simprec::limits
