#include "plugins/host/plugin_thread.hpp"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>

#include "plugins/host/exit_guard.hpp"
#include "plugins/host/leftover_children.hpp"
#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {

// What the host and the worker share; the worker keeps it alive after an abandoned call.
struct PluginThread::Shared {
  std::mutex mutex;
  std::condition_variable changed;
  std::function<void()> task;  // owned here until the worker is done with it
  bool has_task = false, done = false, stop = false;
  std::exception_ptr error;

  void serve() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return has_task || stop; });
      if (!has_task) return;
      lock.unlock();
      std::exception_ptr thrown;
      try {
        task();
      } catch (...) {
        thrown = std::current_exception();
      }
      // Only the plugin's code runs on this thread: its children are the plugin's.
      end_children_of_this_thread();
      lock.lock();
      error = thrown;
      has_task = false;
      done = true;
      changed.notify_all();
    }
  }
};

PluginThread::PluginThread(std::optional<std::chrono::milliseconds> time_limit)
    : time_limit_(time_limit) {
  if (!time_limit_) return;
  shared_ = std::make_shared<Shared>();
  worker_ = std::thread([shared = shared_] { shared->serve(); });
}

PluginThread::~PluginThread() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stop = true;
  }
  shared_->changed.notify_all();
  worker_.join();
}

void PluginThread::call(const std::function<void()>& task, const std::string& who,
                        const std::string& doing) {
  if (abandoned_) {
    throw AbandonedCallError(who + " cannot be used: it is still " + abandoned_call_ +
                             " after its time limit");
  }
  if (!time_limit_) {
    const PluginCodeScope scope(who, doing);
    return task();
  }
  std::unique_lock lock(shared_->mutex);
  shared_->task = [task, who, doing] {
    const PluginCodeScope scope(who, doing);
    task();
  };
  shared_->has_task = true;
  shared_->done = false;
  shared_->changed.notify_all();
  if (!shared_->changed.wait_for(lock, *time_limit_, [&] { return shared_->done; })) {
    abandoned_ = true;
    abandoned_call_ = doing;
    worker_.detach();
    throw AbandonedCallError(who + " did not finish " + doing + " within " +
                             seconds_text(*time_limit_) +
                             "; it runs in this process, where it cannot be stopped");
  }
  shared_->task = nullptr;
  if (shared_->error) std::rethrow_exception(std::exchange(shared_->error, nullptr));
}

}  // namespace simprec::plugins
