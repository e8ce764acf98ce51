#include "lib/limits/input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace simprec::limits {

uint64_t require_regular_file(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) throw std::runtime_error(path.string() + ": no such file");
    throw std::runtime_error(path.string() + ": cannot read: " + std::strerror(errno));
  }
  const char* kind = nullptr;
  if (S_ISDIR(info.st_mode))
    kind = "a directory";
  else if (S_ISFIFO(info.st_mode))
    kind = "a FIFO";
  else if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode))
    kind = "a device";
  else if (S_ISSOCK(info.st_mode))
    kind = "a socket";
  else if (!S_ISREG(info.st_mode))
    kind = "not a file";
  if (kind) throw std::runtime_error(path.string() + ": not a regular file (" + kind + ")");
  return static_cast<uint64_t>(info.st_size);
}

}  // namespace simprec::limits
