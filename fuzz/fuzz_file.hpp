// The readers under test take a path: the fuzz input is handed to them as an anonymous
// in-memory file (memfd), reachable as /proc/self/fd/N, so that no disk is touched and
// parallel fuzzing jobs cannot meet.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace simprec::fuzzing {

class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(memfd_create("simprec-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();  // not a finding in the code under test: stop loudly
    for (size_t done = 0; done < size;) {
      const ssize_t n = write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace simprec::fuzzing
