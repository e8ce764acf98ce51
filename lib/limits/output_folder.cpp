#include "lib/limits/output_folder.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "lib/limits/strict_parse.hpp"

namespace simprec::limits {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& path, const std::string& what, int error) {
  std::string reason = std::strerror(error);
  if (error == ELOOP || error == ENOTDIR)
    reason = "it is a symbolic link or not a folder, which simprec does not write through";
  if (error == EISDIR) reason = "it is a directory";
  throw std::runtime_error(path.string() + ": " + what + ": " + reason);
}

// A regular file, or the refusal naming what it is.
void require_regular(int fd, const fs::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    fail(path, "cannot inspect", error);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw std::runtime_error(path.string() +
                             ": not a regular file; simprec writes only regular "
                             "files here");
  }
}

std::atomic<unsigned> g_temporary_count{0};

// A name inside the folder: one path component, so that nothing is reached through another
// folder (a tensor named "../x" by a plugin stays a refusal, not a file elsewhere).
const std::string& checked_name(const fs::path& folder, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    throw std::runtime_error(folder.string() + ": '" + excerpt(name) +
                             "' cannot be a file name here (expected one name without '/')");
  }
  return name;
}

}  // namespace

OutputFolder::OutputFolder(const fs::path& dir, bool create) : path_(dir) {
  if (dir.empty())
    throw std::runtime_error("an output folder needs a name; an empty one was given");
  if (create) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error(dir.string() + ": cannot create the folder: " + ec.message());
  }
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) fail(dir, "cannot open the folder", errno);
}

OutputFolder::OutputFolder(const OutputFolder& parent, const std::string& name)
    : path_(parent.path_ / name) {
  checked_name(parent.path_, name);
  if (::mkdirat(parent.fd_, name.c_str(), 0755) != 0 && errno != EEXIST)
    fail(path_, "cannot create the folder", errno);
  fd_ = ::openat(parent.fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) fail(path_, "cannot open the folder", errno);
}

OutputFolder::OutputFolder(OutputFolder&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

OutputFolder::~OutputFolder() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFolder::write_file(const std::string& name, std::string_view bytes, bool durable) const {
  ReplacingFile file(*this, name);
  file.write(bytes);
  file.commit(durable);
}

int OutputFolder::open_file(const std::string& name, int flags) const {
  checked_name(path_, name);
  const int fd = ::openat(fd_, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) fail(path_ / name, "cannot open", errno);
  require_regular(fd, path_ / name);
  // O_NONBLOCK kept a FIFO from blocking the open; a regular file's writes do not need it.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

InputFile OutputFolder::read_file(const std::string& name, std::string_view expected) const {
  return InputFile(fd_, name, path_ / name, expected);
}

bool OutputFolder::contains(const std::string& name) const {
  struct stat info {};
  return ::fstatat(fd_, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0;
}

bool OutputFolder::move_without_replacing(const std::string& from, const std::string& to) const {
  if (::renameat2(fd_, from.c_str(), fd_, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  fail(path_ / from, "cannot rename to " + to, errno);
}

void OutputFolder::remove_file(const std::string& name) const {
  if (::unlinkat(fd_, name.c_str(), 0) != 0 && errno != ENOENT)
    fail(path_ / name, "cannot remove", errno);
}

ReplacingFile::ReplacingFile(const OutputFolder& folder, std::string name)
    : folder_(folder), name_(std::move(name)) {
  checked_name(folder_.path(), name_);
  // A fresh name each time, created exclusively: nothing already there is ever opened.
  for (int attempt = 0; fd_ < 0; ++attempt) {
    temporary_ = "." + name_ + ".tmp." + std::to_string(::getpid()) + "." +
                 std::to_string(g_temporary_count.fetch_add(1));
    fd_ = ::openat(folder_.fd(), temporary_.c_str(),
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0 && (errno != EEXIST || attempt > 100))
      limits::fail(folder_.path() / name_, "cannot write", errno);
  }
}

ReplacingFile::~ReplacingFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlinkat(folder_.fd(), temporary_.c_str(), 0);
  }
}

void ReplacingFile::fail(const std::string& what) {
  const int error = errno;
  ::close(fd_);
  fd_ = -1;
  ::unlinkat(folder_.fd(), temporary_.c_str(), 0);
  limits::fail(folder_.path() / name_, what, error);
}

void ReplacingFile::write(const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write failed");
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void ReplacingFile::commit(bool durable) {
  if (durable && ::fdatasync(fd_) != 0) fail("write failed");
  // renameat replaces whatever entry has the name (a link is replaced, not followed), except a
  // directory, which is refused.
  if (::renameat(folder_.fd(), temporary_.c_str(), folder_.fd(), name_.c_str()) != 0)
    fail("cannot rename into place");
  ::close(fd_);
  fd_ = -1;
}

OutputFolder folder_of(const fs::path& file) {
  return OutputFolder(file.has_parent_path() ? file.parent_path() : fs::path("."), false);
}

void write_file_replacing(const fs::path& file, std::string_view bytes) {
  folder_of(file).write_file(file.filename().string(), bytes);
}

std::string output_path_problem(std::string_view value) {
  if (value.find_first_not_of(" \t") == std::string_view::npos)
    return "is empty (expected a file or folder name)";
  if (value.size() > 4096) return "is longer than 4096 bytes";
  for (const char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return "holds a control character (expected a file or folder name)";
  }
  return "";
}

void check_output_path(std::string_view option, std::string_view value) {
  if (const std::string problem = output_path_problem(value); !problem.empty()) {
    throw std::invalid_argument(std::string(option) + " '" + excerpt(value) + "' " + problem);
  }
}

}  // namespace simprec::limits
