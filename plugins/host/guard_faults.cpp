#include "plugins/host/guard_faults.hpp"

#include <fcntl.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

#include <nlohmann/json.hpp>

namespace simprec::plugins {

// Everything the signal handler needs, prepared beforehand: it may only make
// async-signal-safe calls (open, write, _exit), so no formatting beyond a number.
struct GuardFaultRegistration::Region {
  uintptr_t guard_begin, guard_end, data_end;
  std::string file;  // empty: stderr
  std::string head_wrote, head_read, tail;
};

namespace {

constexpr int kSlots = 256;
std::array<std::atomic<const GuardFaultRegistration::Region*>, kSlots> regions{};
std::mutex registry_mutex;
int registered = 0;
struct sigaction previous_action;
std::string response_file;  // guarded by registry_mutex

void write_all(int fd, const char* text, size_t bytes) {
  while (bytes > 0) {
    const ssize_t n = write(fd, text, bytes);
    if (n <= 0) return;
    text += n;
    bytes -= static_cast<size_t>(n);
  }
}

void write_text(int fd, const std::string& text) {
  write_all(fd, text.data(), text.size());
}

void write_number(int fd, uintptr_t value) {
  char digits[24];
  size_t n = 0;
  do {
    digits[sizeof digits - 1 - n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  write_all(fd, digits + sizeof digits - n, n);
}

// x86-64 reports in the page-fault error code whether the access was a write.
bool was_write(const void* context) {
#if defined(__x86_64__) && defined(REG_ERR)
  const auto* uc = static_cast<const ucontext_t*>(context);
  return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)context;
  return true;
#endif
}

void on_segv(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const auto& slot : regions) {
    const auto* r = slot.load(std::memory_order_acquire);
    if (!r || address < r->guard_begin || address >= r->guard_end) continue;
    const int fd = r->file.empty()
                       ? STDERR_FILENO
                       : open(r->file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    write_text(fd, was_write(context) ? r->head_wrote : r->head_read);
    write_number(fd, address - r->data_end);
    write_text(fd, r->tail);
    _exit(1);
  }
  // Not a guard page: handled as before we came. Returning retries the access, which faults
  // again into that handling.
  sigaction(signal, &previous_action, nullptr);
}

void install_handler() {
  struct sigaction action {};
  action.sa_sigaction = on_segv;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previous_action);
}

}  // namespace

GuardFaultRegistration::GuardFaultRegistration(const uint8_t* guard_begin, size_t guard_bytes,
                                               const uint8_t* data_end,
                                               const std::string& message) {
  std::lock_guard lock(registry_mutex);
  const std::string wrote = message + ": it wrote to offset +";
  const std::string read = message + ": it read offset +";
  const std::string after = " past the end (a guard page stopped it)";
  auto* region = new Region;
  region->guard_begin = reinterpret_cast<uintptr_t>(guard_begin);
  region->guard_end = region->guard_begin + guard_bytes;
  region->data_end = reinterpret_cast<uintptr_t>(data_end);
  region->file = response_file;
  if (response_file.empty()) {
    region->head_wrote = "simprec: error: " + wrote;
    region->head_read = "simprec: error: " + read;
    region->tail = after + "\n";
  } else {
    // A JSON string split around the number; the pieces are escaped on their own.
    const auto escaped = [](const std::string& s) {
      const std::string quoted = nlohmann::json(s).dump();
      return quoted.substr(1, quoted.size() - 2);
    };
    region->head_wrote = "{\"ok\": false, \"error\": \"" + escaped(wrote);
    region->head_read = "{\"ok\": false, \"error\": \"" + escaped(read);
    region->tail = escaped(after) + "\"}\n";
  }
  for (int i = 0; i < kSlots; ++i) {
    if (regions[i].load() == nullptr) {
      slot_ = i;
      region_ = region;
      if (registered++ == 0) install_handler();
      regions[i].store(region, std::memory_order_release);
      return;
    }
  }
  delete region;
}

GuardFaultRegistration::~GuardFaultRegistration() {
  if (!region_) return;
  std::lock_guard lock(registry_mutex);
  regions[slot_].store(nullptr, std::memory_order_release);
  delete region_;
  if (--registered == 0) sigaction(SIGSEGV, &previous_action, nullptr);
}

void report_guard_faults_to_response_file(const std::filesystem::path& file) {
  std::lock_guard lock(registry_mutex);
  response_file = file.string();
}

}  // namespace simprec::plugins
