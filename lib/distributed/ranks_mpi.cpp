// Ranks of an MPI job (Open MPI). While cases run, only the server thread (on rank 0) or one
// case's thread at a time (on the others, under a mutex) calls MPI; before and after, the main
// thread: MPI_THREAD_SERIALIZED is enough.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "lib/distributed/ranks.hpp"

namespace simprec::distributed {
namespace {

// Messages between rank 0 and the others, told apart by their tags.
enum Tag : int {
  kAsk = 1,     // another rank -> 0: the next case, please (no data)
  kCase = 2,    // 0 -> that rank: an int64 case index, -1 when none is left
  kRecord = 3,  // another rank -> 0: a finished case's record, as JSON text
  kDone = 4,    // another rank -> 0: its last record is sent (no data)
};
constexpr int kRankZero = 0;

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

// Open MPI's blocking calls poll without sleeping and would take a core from the cases: wait
// for a request with short sleeps instead (messages here are rare, one per case).
void wait(MPI_Request& request) {
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void send(const void* data, int count, MPI_Datatype type, int destination, Tag tag) {
  MPI_Request request;
  check(MPI_Isend(data, count, type, destination, tag, MPI_COMM_WORLD, &request), "MPI_Isend");
  wait(request);
}

void receive(void* data, int count, MPI_Datatype type, int source, Tag tag) {
  MPI_Request request;
  check(MPI_Irecv(data, count, type, source, tag, MPI_COMM_WORLD, &request), "MPI_Irecv");
  wait(request);
}

class RankZero : public experiments::OtherProcesses {
 public:
  explicit RankZero(int others) : others_(others) {}

  void serve(const std::function<std::optional<size_t>()>& next_case,
             const std::function<void(const nlohmann::json&)>& record) override {
    for (int running = others_; running > 0 && !stopped_.load();) {
      MPI_Status status;
      int arrived = 0;
      check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status),
            "MPI_Iprobe");
      if (!arrived) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      const int source = status.MPI_SOURCE;
      switch (status.MPI_TAG) {
        case kAsk: {
          receive(nullptr, 0, MPI_BYTE, source, kAsk);
          const std::optional<size_t> i = next_case();
          const int64_t reply = i ? static_cast<int64_t>(*i) : -1;
          send(&reply, 1, MPI_INT64_T, source, kCase);
          break;
        }
        case kRecord: {
          int length = 0;
          check(MPI_Get_count(&status, MPI_CHAR, &length), "MPI_Get_count");
          std::string text(static_cast<size_t>(length), '\0');
          receive(text.data(), length, MPI_CHAR, source, kRecord);
          record(nlohmann::json::parse(text));
          break;
        }
        case kDone:
          receive(nullptr, 0, MPI_BYTE, source, kDone);
          --running;
          break;
        default:
          throw std::runtime_error("MPI rank " + std::to_string(source) +
                                   " sent a message simprec does not know (tag " +
                                   std::to_string(status.MPI_TAG) + ")");
      }
    }
  }

  void stop() override { stopped_.store(true); }

 private:
  int others_;
  std::atomic<bool> stopped_{false};
};

std::mutex g_mpi_mutex;  // the other ranks' threads take turns at MPI

}  // namespace

Ranks::Ranks() {
  if (launched_ranks() <= 1) return;
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw std::runtime_error(
        "this MPI library does not allow calls from several threads "
        "(MPI_THREAD_SERIALIZED), which simprec needs");
  }
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

Ranks::~Ranks() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

void Ranks::agree_on(const std::string& fingerprint, const std::string& what) {
  if (size_ <= 1) return;
  int64_t length = static_cast<int64_t>(fingerprint.size());
  check(MPI_Bcast(&length, 1, MPI_INT64_T, kRankZero, MPI_COMM_WORLD), "MPI_Bcast");
  std::string rank_zeros = rank_ == kRankZero ? fingerprint : std::string(length, '\0');
  check(MPI_Bcast(rank_zeros.data(), static_cast<int>(length), MPI_CHAR, kRankZero, MPI_COMM_WORLD),
        "MPI_Bcast");
  if (rank_zeros != fingerprint) {
    throw std::runtime_error("MPI rank " + std::to_string(rank_) + " read another " + what +
                             " than rank 0 (fingerprint " + fingerprint +
                             ", rank 0: " + rank_zeros + "); every rank must read the same file");
  }
}

experiments::OtherProcesses& Ranks::others() {
  static RankZero rank_zero(size_ - 1);
  return rank_zero;
}

std::optional<size_t> Ranks::ask_for_case() {
  std::lock_guard lock(g_mpi_mutex);
  send(nullptr, 0, MPI_BYTE, kRankZero, kAsk);
  int64_t reply = -1;
  receive(&reply, 1, MPI_INT64_T, kRankZero, kCase);
  if (reply < 0) return std::nullopt;
  return static_cast<size_t>(reply);
}

void Ranks::send_record(const nlohmann::json& record) {
  const std::string text = record.dump();
  if (text.size() > static_cast<size_t>(INT32_MAX))
    throw std::runtime_error("a case's record is too large for one MPI message (" +
                             std::to_string(text.size()) + " bytes)");
  std::lock_guard lock(g_mpi_mutex);
  send(text.data(), static_cast<int>(text.size()), MPI_CHAR, kRankZero, kRecord);
}

void Ranks::finish() {
  std::lock_guard lock(g_mpi_mutex);
  send(nullptr, 0, MPI_BYTE, kRankZero, kDone);
}

void Ranks::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

}  // namespace simprec::distributed
