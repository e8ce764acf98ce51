#include "lib/limits/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace simprec::limits {
namespace {

// What a file that is not a regular file is, in words.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

[[noreturn]] void fail_open(const std::filesystem::path& path, int error,
                            std::string_view expected) {
  if (error == ENOENT) throw std::runtime_error(path.string() + ": no such file");
  if (error == ELOOP) {
    throw std::runtime_error(path.string() +
                             ": is a symbolic link, which simprec does not follow here; "
                             "expected " +
                             std::string(expected));
  }
  throw std::runtime_error(path.string() + ": cannot read: " + std::strerror(error));
}

// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. Regular files
// ignore the flag, and nothing but a regular file is read.
constexpr int kOpenFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

}  // namespace

InputFile::InputFile(const std::filesystem::path& path, std::string_view expected) : path_(path) {
  fd_ = ::open(path.c_str(), kOpenFlags);
  if (fd_ < 0) fail_open(path_, errno, expected);
  check_opened(expected);
}

InputFile::InputFile(int folder_fd, const std::string& name, const std::filesystem::path& path,
                     std::string_view expected)
    : path_(path) {
  fd_ = ::openat(folder_fd, name.c_str(), kOpenFlags | O_NOFOLLOW);
  if (fd_ < 0) fail_open(path_, errno, expected);
  check_opened(expected);
}

void InputFile::check_opened(std::string_view expected) {
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int error = errno;
    ::close(fd_);
    fail_open(path_, error, expected);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw std::runtime_error(path_.string() + ": not a regular file (" + kind_of(info.st_mode) +
                             "); expected " + std::string(expected));
  }
  size_ = static_cast<uint64_t>(info.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(uint64_t offset, void* buffer, size_t bytes) const {
  auto* out = static_cast<char*>(buffer);
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, out + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(path_.string() + ": cannot read: " + std::strerror(errno));
    if (n == 0) {
      throw std::runtime_error(path_.string() + ": ends after " + std::to_string(offset + done) +
                               " bytes, " + std::to_string(offset + bytes) + " were expected");
    }
    done += static_cast<size_t>(n);
  }
}

std::string InputFile::read_all(uint64_t max_bytes) const {
  if (size_ > max_bytes) {
    throw std::runtime_error(path_.string() + ": " + std::to_string(size_) +
                             " bytes, more than this kind of file may hold (" +
                             std::to_string(max_bytes) + ")");
  }
  std::string text(static_cast<size_t>(size_), '\0');
  read_at(0, text.data(), text.size());
  return text;
}

std::string read_text_file(const std::filesystem::path& path, uint64_t max_bytes,
                           std::string_view expected) {
  return InputFile(path, expected).read_all(max_bytes);
}

}  // namespace simprec::limits
