// Runs all of an in-process plugin's code (loading, the entry function, kernel calls,
// shutdown, unloading) on one worker thread of its own, so that the host can stop waiting for
// a call that outlives its time limit. All calls run on the same thread, so a plugin that keeps
// per-thread state (a current CUDA device) sees one thread, as it would without a time limit.
//
// A thread cannot be stopped safely from outside: it may hold the plugin's locks, malloc's or
// the dynamic loader's, and cancelling it would leave them held. So a call that times out is
// abandoned: the worker is left running with everything the task holds (the task owns the
// memory it passes to the plugin, so nothing it uses is freed), every later call is refused,
// and the caller gets an AbandonedCallError. The process should end soon after, without exit
// handlers: they could tear down what the abandoned thread still uses.
//
// Every step runs in a PluginCodeScope (exit_guard.hpp), so that a plugin ending the process is
// reported, and on the worker thread the children a step left running are ended with it
// (leftover_children.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace simprec::plugins {

class PluginThread {
 public:
  // Without a time limit every call runs on the calling thread (the runner process, which the
  // host kills instead).
  explicit PluginThread(std::optional<std::chrono::milliseconds> time_limit);
  ~PluginThread();  // waits for the worker, unless a call was abandoned
  PluginThread(const PluginThread&) = delete;
  PluginThread& operator=(const PluginThread&) = delete;

  // Runs `task` on the worker and waits for it, rethrowing what it throws. When it takes longer
  // than the time limit, abandons it and throws AbandonedCallError("<who> did not finish
  // <doing> within T s ..."). Throws AbandonedCallError at once after an abandoned call.
  void call(const std::function<void()>& task, const std::string& who, const std::string& doing);

  bool abandoned() const { return abandoned_; }

 private:
  struct Shared;
  std::optional<std::chrono::milliseconds> time_limit_;
  std::shared_ptr<Shared> shared_;  // also owned by the worker, which may outlive this
  std::thread worker_;
  bool abandoned_ = false;
  std::string abandoned_call_;
};

}  // namespace simprec::plugins
