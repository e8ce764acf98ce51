// Turns an access to the guard page after a kernel's output (guarded_buffer.hpp) into a report
// of the overrun instead of a bare SIGSEGV. While guard pages are registered a SIGSEGV handler
// is installed; a fault inside one writes the report prepared for that page and ends the process
// with status 1 at once, since the kernel can neither be resumed nor safely unwound. Any other
// fault goes back to the handling that was in place before (by default the process dies of
// SIGSEGV, which the host of a runner reports as a crash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace simprec::plugins {

// One guard page (or several) and what to say when they are touched. The report reads
// "MESSAGE: it wrote to offset +N past the end (a guard page stopped it)", N counted from
// `data_end`.
class GuardFaultRegistration {
 public:
  GuardFaultRegistration(const uint8_t* guard_begin, size_t guard_bytes, const uint8_t* data_end,
                         const std::string& message);
  ~GuardFaultRegistration();
  GuardFaultRegistration(const GuardFaultRegistration&) = delete;
  GuardFaultRegistration& operator=(const GuardFaultRegistration&) = delete;

  struct Region;

 private:
  Region* region_ = nullptr;  // null when every slot was taken: the fault is then a plain crash
  int slot_ = -1;
};

// Where reports go: by default stderr, as "simprec: error: REPORT". The runner sends them to
// its response file instead, as {"ok": false, "error": REPORT}, for the host to read. Applies
// to registrations made afterwards.
void report_guard_faults_to_response_file(const std::filesystem::path& file);

}  // namespace simprec::plugins
