// Output memory for a kernel call that shows a write past its end instead of letting it corrupt
// the host's heap. The bytes start at a 256-byte boundary (DLPack's alignment) and end where
// the next 256-byte boundary begins; the gap up to it holds canary bytes checked after the call,
// and the page after that is a guard page (PROT_NONE), so any access further out faults at
// once and guard_faults.hpp reports it as an overrun of this output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "plugins/host/guard_faults.hpp"

namespace simprec::plugins {

class GuardedBuffer {
 public:
  // `bytes` zero-filled bytes. `overrun_message` says whose buffer this is, for reports of a
  // write past its end ("plugin 'p' kernel 'k' wrote past the end of its output 'D' ...").
  // Throws PluginError when the memory cannot be mapped.
  GuardedBuffer(size_t bytes, const std::string& overrun_message);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  std::span<uint8_t> data() { return {begin_, size_}; }

  // How many bytes past the end were changed (counting to the farthest changed canary byte),
  // or nothing when every canary byte is intact.
  std::optional<size_t> overrun_bytes() const;

  static constexpr size_t kAlignment = 256;

 private:
  uint8_t* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  uint8_t* begin_ = nullptr;
  size_t size_ = 0;
  size_t canary_bytes_ = 0;
  std::unique_ptr<GuardFaultRegistration> registration_;
};

}  // namespace simprec::plugins
