#include "emulation/progress.hpp"

namespace simprec {
namespace {

thread_local ProgressMeter* t_meter = nullptr;

}  // namespace

void ProgressMeter::start_stage(std::string_view name) {
  const std::lock_guard lock(stage_mutex_);
  stage_ = name;
  done_.store(0, std::memory_order_relaxed);
  total_.store(0, std::memory_order_relaxed);
}

ProgressMeter::Reading ProgressMeter::read() const {
  Reading r;
  {
    const std::lock_guard lock(stage_mutex_);
    r.stage = stage_;
  }
  r.done = done_.load(std::memory_order_relaxed);
  r.total = total_.load(std::memory_order_relaxed);
  return r;
}

ProgressScope::ProgressScope(ProgressMeter* meter) : previous_(t_meter) {
  t_meter = meter;
}

ProgressScope::~ProgressScope() {
  t_meter = previous_;
}

ProgressMeter* current_progress() {
  return t_meter;
}

void progress_stage(std::string_view name) {
  if (t_meter) t_meter->start_stage(name);
}

}  // namespace simprec
