// A sweep shared among the ranks of an MPI job: `mpirun -n R simprec run FILE` (or srun)
// starts R processes. Rank 0 keeps the results folder (lock, resume, records) and runs cases;
// the others ask it for cases one at a time and send it each record, so they need no shared
// file system. Records are the same whichever rank computes them; a rank that dies loses only
// the cases it had in flight, which the next run computes again.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/experiments/runner.hpp"

namespace simprec::distributed {

// The number of ranks an MPI launcher (mpirun, srun) says it started, read from the
// environment; 1 when this process was not started by one.
int launched_ranks();

class Ranks {
 public:
  // Joins the MPI job when a launcher started this process as one of several; alone
  // otherwise. A build without MPI refuses (std::runtime_error) to be one of several ranks:
  // each would run the whole sweep.
  Ranks();
  ~Ranks();
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Throws std::runtime_error on every rank whose `fingerprint` differs from rank 0's: ranks
  // that read different experiment files would number their cases differently.
  void agree_on(const std::string& fingerprint, const std::string& what);

  // Rank 0's side: the other ranks, served while rank 0 runs cases itself.
  experiments::OtherProcesses& others();
  // The other ranks' side, safe from several threads: the next case (an index into the case
  // list; nullopt when none is left), a finished case's record, and the end of this rank's
  // part (after its last record).
  std::optional<size_t> ask_for_case();
  void send_record(const nlohmann::json& record);
  void finish();

  // Ends every rank of the job: an error on one would leave the others waiting.
  [[noreturn]] void abort(int exit_code);

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace simprec::distributed
