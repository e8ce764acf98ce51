#include "emulation/cancellation.hpp"

namespace simprec {
namespace {

thread_local const CancellationToken* t_current = nullptr;

}  // namespace

CancellationScope::CancellationScope(const CancellationToken* token) : previous_(t_current) {
  t_current = token;
}

CancellationScope::~CancellationScope() {
  t_current = previous_;
}

const CancellationToken* current_cancellation() {
  return t_current;
}

void throw_if_cancelled() {
  if (t_current && t_current->requested()) throw Cancelled(t_current->reason());
}

}  // namespace simprec
