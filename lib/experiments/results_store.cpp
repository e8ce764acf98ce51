#include "lib/experiments/results_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>
#include <stdexcept>
#include <string_view>

#include "lib/experiments/record_layout.hpp"
#include "lib/experiments/record_line.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::experiments {
namespace {

namespace fs = std::filesystem;

const std::string kLockFile = "run.lock";
const std::string kHeader = "experiment.json";
const std::string kResults = "results.jsonl";
const std::string kDamaged = "results.jsonl.damaged";

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw std::runtime_error(path.string() + ": " + what);
}

// Reads the lines of results.jsonl: good records (the first of each case id) and the lines
// skipped, each with its text. A last line without its newline is a torn write; with `repair`
// it is cut off.
ResultsFile load_records(const limits::OutputFolder& folder, bool repair) {
  ResultsFile out;
  if (!folder.contains(kResults)) return out;
  const fs::path file = folder.path() / kResults;
  const std::string content =
      folder.read_file(kResults, "the records of a results folder (results.jsonl)")
          .read_all(limits::kMaxRecordsBytes);
  std::set<std::string> ids;
  size_t complete_end = 0, start = 0, line = 0;
  while (start < content.size()) {
    const size_t newline = content.find('\n', start);
    if (newline == std::string::npos) break;
    ++line;
    const std::string_view text(content.data() + start, newline - start);
    start = complete_end = newline + 1;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    LineReading reading = read_record_line(text);
    if (!reading.record) {
      out.skipped.push_back({line, reading.problem, std::string(text)});
      continue;
    }
    nlohmann::json& record = *reading.record;
    if (const std::string problem = record_layout_problem(record); !problem.empty()) {
      // The problem quotes member names from the file: a bounded excerpt of it.
      out.skipped.push_back({line, limits::excerpt(problem, 200), std::string(text)});
      continue;
    }
    const std::string id = record["case_id"].get<std::string>();
    if (!ids.insert(id).second) {
      out.skipped.push_back(
          {line, "a second record of case " + limits::excerpt(id), std::string(text)});
      continue;
    }
    out.good_lines.emplace_back(text);
    out.records.push_back(std::move(record));
  }
  if (complete_end < content.size()) {
    out.skipped.push_back({line + 1, repair ? "torn by an interrupted write; cut off"
                                            : "incomplete (a run is writing it, or was "
                                              "interrupted)"});
    if (repair) {
      const int fd = folder.open_file(kResults, O_WRONLY);
      const bool cut = ::ftruncate(fd, static_cast<off_t>(complete_end)) == 0;
      const int error = errno;
      ::close(fd);
      if (!cut) fail(file, std::string("cannot cut off a torn record: ") + std::strerror(error));
    }
  }
  return out;
}

// Takes the folder's lock for this process (released when `fd` is closed) and writes who holds
// it into the lock file, for the message a second run gets.
int lock_folder(const limits::OutputFolder& folder) {
  const fs::path& dir = folder.path();
  const fs::path file = dir / kLockFile;
  const int fd = folder.open_file(kLockFile, O_RDWR | O_CREAT);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char holder[512] = {};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    if (error == EWOULDBLOCK) {
      std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "";
      while (!who.empty() && who.back() == '\n') who.pop_back();
      fail(dir, "is in use by another simprec run (" + (who.empty() ? "holder unknown" : who) +
                    "); wait for it to finish, or choose another folder with --out");
    }
    fail(file, std::string("cannot lock: ") + std::strerror(error));
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char when[32] = {};
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::string who =
      "pid " + std::to_string(::getpid()) + " on " + host + ", started " + when + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, who.data(), who.size(), 0) != static_cast<ssize_t>(who.size())) {
    const int error = errno;
    ::close(fd);
    fail(file, std::string("cannot write the lock file: ") + std::strerror(error));
  }
  return fd;
}

[[noreturn]] void refuse_foreign_folder(const fs::path& dir) {
  fail(dir,
       "exists and is not a simprec results folder (no experiment.json); use --force or --out "
       "to choose another folder");
}

// Whether `dir` holds anything but the lock file.
bool holds_other_files(const fs::path& dir) {
  return std::any_of(fs::directory_iterator(dir), fs::directory_iterator(),
                     [](const auto& entry) { return entry.path().filename() != kLockFile; });
}

// Moves results.jsonl, experiment.json (and results.jsonl.damaged) aside to the first names
// results.jsonl.previous[.N], experiment.json.previous[.N] not yet taken, so that no --force
// ever replaces records saved by an earlier one. Returns the suffix used (empty: nothing moved).
std::string move_previous_results(const limits::OutputFolder& folder) {
  if (!folder.contains(kResults)) return "";
  for (int n = 1;; ++n) {
    const std::string suffix = ".previous" + (n == 1 ? std::string() : "." + std::to_string(n));
    if (folder.contains(kResults + suffix) || folder.contains(kHeader + suffix) ||
        folder.contains(kDamaged + suffix))
      continue;
    if (!folder.move_without_replacing(kResults, kResults + suffix)) continue;
    if (folder.contains(kHeader)) folder.move_without_replacing(kHeader, kHeader + suffix);
    if (folder.contains(kDamaged)) folder.move_without_replacing(kDamaged, kDamaged + suffix);
    return suffix;
  }
}

// Appends the skipped lines to results.jsonl.damaged and rewrites results.jsonl with the good
// lines alone (atomically), so that a damaged record is kept for inspection, reported once, and
// its case runs again.
void set_aside(const limits::OutputFolder& folder, const ResultsFile& file) {
  std::string damaged, good;
  for (const auto& s : file.skipped) {
    if (!s.text.empty()) damaged += s.text + "\n";
  }
  if (damaged.empty()) return;
  for (const auto& line : file.good_lines) good += line + "\n";
  const int fd = folder.open_file(kDamaged, O_WRONLY | O_CREAT | O_APPEND);
  const bool written =
      ::write(fd, damaged.data(), damaged.size()) == static_cast<ssize_t>(damaged.size()) &&
      ::fdatasync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!written)
    fail(folder.path() / kDamaged, std::string("cannot set lines aside: ") + std::strerror(error));
  folder.write_file(kResults, good, /*durable=*/true);
}

// "the contents of FILE changed since (crc64:... then, crc64:... now)" when the folder's
// experiment differs from `spec` in the contents of a file it reads; empty otherwise.
std::string changed_file(const nlohmann::json& header, const ExperimentSpec& spec) {
  if (!header.is_object() || !header.contains("experiment")) return "";
  const nlohmann::json& then = header["experiment"];
  if (!then.is_object() || !then.contains("files") || !then["files"].is_object()) return "";
  for (const auto& [file, digest] : spec.files) {
    const auto it = then["files"].find(file);
    if (it == then["files"].end() || !it->is_string() || *it == digest) continue;
    return "the contents of " + file + " changed since they were computed (" +
           it->get<std::string>() + " then, " + digest + " now)";
  }
  return "";
}

}  // namespace

ResultsStore::ResultsStore(fs::path dir, const ExperimentSpec& spec, bool force)
    : dir_(std::move(dir)), folder_(dir_) {
  // A folder of something else is refused before the lock file is put into it.
  if (!force && !folder_.contains(kHeader) && holds_other_files(dir_)) {
    refuse_foreign_folder(dir_);
  }
  lock_fd_ = lock_folder(folder_);
  try {
    open_locked(spec, force);
  } catch (...) {
    ::close(lock_fd_);
    throw;
  }
}

void ResultsStore::open_locked(const ExperimentSpec& spec, bool force) {
  const std::string fingerprint = spec.fingerprint();
  bool start_afresh = false;
  if (folder_.contains(kHeader)) {
    // Not JSON (damaged, edited) counts as another experiment's; a link or FIFO is refused.
    const nlohmann::json existing =
        nlohmann::json::parse(folder_.read_file(kHeader, "a results folder's experiment.json")
                                  .read_all(limits::kMaxJsonBytes),
                              nullptr, /*allow_exceptions=*/false);
    const auto text = [&](const char* key) {
      const auto it = existing.is_object() ? existing.find(key) : existing.end();
      return it != existing.end() && it->is_string() ? it->get<std::string>() : "?";
    };
    if (text("fingerprint") != fingerprint) {
      if (!force) {
        const std::string changed = changed_file(existing, spec);
        fail(dir_, "holds results of a different experiment (" +
                       (changed.empty() ? "'" + text("name") + "' from " + text("file") +
                                              ", or an earlier version of this file"
                                        : changed) +
                       "); use --force to move them aside and start afresh, or --out to "
                       "choose another folder");
      }
      start_afresh = true;
    }
  } else if (holds_other_files(dir_)) {
    if (!force) refuse_foreign_folder(dir_);
    start_afresh = true;
  }
  if (start_afresh) previous_suffix_ = move_previous_results(folder_);
  const nlohmann::json header_json = {{"name", spec.name},
                                      {"file", spec.file},
                                      {"fingerprint", fingerprint},
                                      {"experiment", spec.to_json()}};
  folder_.write_file(
      kHeader, header_json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
      /*durable=*/true);
  ResultsFile existing_results = load_records(folder_, /*repair=*/true);
  set_aside(folder_, existing_results);
  skipped_ = std::move(existing_results.skipped);
  for (auto& record : existing_results.records) {
    // The key first: json's assignment takes its argument by value, and C++17 evaluates the
    // right side of `=` first, which would move the record away before its id is read.
    const std::string id = record["case_id"].get<std::string>();
    finished_[id] = std::move(record);
  }
  fd_ = folder_.open_file(kResults, O_WRONLY | O_CREAT | O_APPEND);
}

ResultsStore::~ResultsStore() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void ResultsStore::append(const nlohmann::json& record) {
  const std::string line = record_line(record);
  std::lock_guard lock(mutex_);
  // One write per record (O_APPEND): a crash leaves whole records and at most one torn line,
  // which the next run cuts off.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(dir_ / "results.jsonl", std::string("write failed: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  ::fdatasync(fd_);
}

std::string skipped_lines_text(const fs::path& file, const std::vector<SkippedLine>& skipped) {
  if (skipped.empty()) return "";
  std::string text = "skipped " + std::to_string(skipped.size()) + " line" +
                     (skipped.size() == 1 ? "" : "s") + " of " + file.string() +
                     " that hold no usable record:";
  constexpr size_t kShown = 10;
  for (size_t i = 0; i < skipped.size() && i < kShown; ++i)
    text += (i ? ", line " : " line ") + std::to_string(skipped[i].line) + " (" +
            skipped[i].reason + ")";
  if (skipped.size() > kShown)
    text += ", ... (" + std::to_string(skipped.size() - kShown) + " more)";
  return text;
}

ResultsFile read_results_file(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(dir, "no results.jsonl here (run the experiment first)");
  const limits::OutputFolder folder(dir, /*create=*/false);
  if (!folder.contains(kResults)) fail(dir, "no results.jsonl here (run the experiment first)");
  ResultsFile file = load_records(folder, /*repair=*/false);
  std::stable_sort(file.records.begin(), file.records.end(), [](const auto& a, const auto& b) {
    return a.value("case_index", uint64_t{0}) < b.value("case_index", uint64_t{0});
  });
  return file;
}

std::vector<nlohmann::json> read_results(const fs::path& dir) {
  return read_results_file(dir).records;
}

}  // namespace simprec::experiments
