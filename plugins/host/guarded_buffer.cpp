#include "plugins/host/guarded_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {
namespace {

// Canary byte i: a fixed pseudo-random sequence, which a kernel writing a little too far would
// be unlikely to reproduce (and never the byte values 0, 1, 2, ... of the test plugins).
uint8_t canary(size_t i) {
  return static_cast<uint8_t>(0xa5 ^ (i * 0x3b));
}

size_t page_bytes() {
  static const size_t bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

}  // namespace

GuardedBuffer::GuardedBuffer(size_t bytes, const std::string& overrun_message) : size_(bytes) {
  const size_t page = page_bytes();
  if (bytes > SIZE_MAX / 2) {
    throw PluginError("cannot map " + std::to_string(bytes) + " bytes for a kernel output");
  }
  canary_bytes_ = (kAlignment - bytes % kAlignment) % kAlignment;
  const size_t used = bytes + canary_bytes_;  // a multiple of kAlignment, which divides a page
  const size_t data_pages = (used + page - 1) / page;
  mapping_bytes_ = (data_pages + 1) * page;
  void* mapping =
      mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) {
    throw PluginError("cannot map " + std::to_string(mapping_bytes_) +
                      " bytes for a kernel output: " + std::strerror(errno));
  }
  mapping_ = static_cast<uint8_t*>(mapping);
  uint8_t* guard = mapping_ + data_pages * page;
  if (mprotect(guard, page, PROT_NONE) != 0) {
    const int error = errno;
    munmap(mapping_, mapping_bytes_);
    throw PluginError(std::string("cannot protect the guard page of a kernel output: ") +
                      std::strerror(error));
  }
  begin_ = guard - used;
  for (size_t i = 0; i < canary_bytes_; ++i) begin_[size_ + i] = canary(i);
  registration_ =
      std::make_unique<GuardFaultRegistration>(guard, page, begin_ + size_, overrun_message);
}

GuardedBuffer::~GuardedBuffer() {
  registration_.reset();
  munmap(mapping_, mapping_bytes_);
}

std::optional<size_t> GuardedBuffer::overrun_bytes() const {
  for (size_t i = canary_bytes_; i > 0; --i) {
    if (begin_[size_ + i - 1] != canary(i - 1)) return i;
  }
  return std::nullopt;
}

}  // namespace simprec::plugins
