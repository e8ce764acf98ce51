#include "lib/experiments/results_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string_view>

#include "lib/limits/input_file.hpp"

namespace simprec::experiments {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLockFile = "run.lock";

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw std::runtime_error(path.string() + ": " + what);
}

// Why `record` cannot be used as a case record, or empty when it can.
std::string record_problem(const nlohmann::json& record) {
  if (!record.is_object()) return "not a JSON object";
  const auto id = record.find("case_id");
  if (id == record.end() || !id->is_string()) return "no case_id";
  const auto index = record.find("case_index");
  if (index != record.end() && !index->is_number_unsigned()) return "case_index is not a count";
  const auto params = record.find("params");
  if (params == record.end() || !params->is_object()) return "no params";
  for (const char* key : {"implementation", "input", "analysis"}) {
    const auto part = params->find(key);
    if (part == params->end() || !part->is_object()) return std::string("no params.") + key;
  }
  return "";
}

// Reads the lines of results.jsonl: good records (the first of each case id) and the lines
// skipped. A last line without its newline is a torn write; with `repair` it is cut off.
ResultsFile load_records(const fs::path& file, bool repair) {
  ResultsFile out;
  if (!fs::exists(file)) return out;
  limits::require_regular_file(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(file, std::string("cannot read: ") + std::strerror(errno));
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> ids;
  size_t complete_end = 0, start = 0, line = 0;
  while (start < content.size()) {
    const size_t newline = content.find('\n', start);
    if (newline == std::string::npos) break;
    ++line;
    const std::string_view text(content.data() + start, newline - start);
    start = complete_end = newline + 1;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      out.skipped.push_back({line, "not JSON"});
      continue;
    }
    if (const std::string problem = record_problem(record); !problem.empty()) {
      out.skipped.push_back({line, problem});
      continue;
    }
    const std::string id = record["case_id"].get<std::string>();
    if (!ids.insert(id).second) {
      out.skipped.push_back({line, "a second record of case " + id});
      continue;
    }
    out.records.push_back(std::move(record));
  }
  if (complete_end < content.size()) {
    out.skipped.push_back({line + 1, repair ? "torn by an interrupted write; cut off"
                                            : "incomplete (a run is writing it, or was "
                                              "interrupted)"});
    if (repair && ::truncate(file.c_str(), static_cast<off_t>(complete_end)) != 0) {
      fail(file, std::string("cannot cut off a torn record: ") + std::strerror(errno));
    }
  }
  return out;
}

// Takes the folder's lock for this process (released when `fd` is closed) and writes who holds
// it into the lock file, for the message a second run gets.
int lock_folder(const fs::path& dir) {
  const fs::path file = dir / kLockFile;
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail(file, std::string("cannot create the lock file: ") + std::strerror(errno));
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

void write_file_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, std::string("cannot write: ") + std::strerror(errno));
    out << text;
    if (!out.flush()) fail(path, std::string("write failed: ") + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) fail(path, "cannot rename into place: " + ec.message());
}

}  // namespace

ResultsStore::ResultsStore(fs::path dir, const ExperimentSpec& spec, bool force)
    : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) fail(dir_, "cannot create the output folder: " + ec.message());
  // A folder of something else is refused before the lock file is put into it.
  if (!force && !fs::exists(dir_ / "experiment.json") && holds_other_files(dir_)) {
    refuse_foreign_folder(dir_);
  }
  lock_fd_ = lock_folder(dir_);
  try {
    open_locked(spec, force);
  } catch (...) {
    ::close(lock_fd_);
    throw;
  }
}

void ResultsStore::open_locked(const ExperimentSpec& spec, bool force) {
  std::error_code ec;
  const fs::path header = dir_ / "experiment.json";
  const fs::path results = dir_ / "results.jsonl";
  const std::string fingerprint = spec.fingerprint();
  bool start_afresh = false;
  if (fs::exists(header)) {
    nlohmann::json existing;
    try {
      std::ifstream in(header);
      existing = nlohmann::json::parse(in);
    } catch (const std::exception&) {
    }
    const auto text = [&](const char* key) {
      const auto it = existing.is_object() ? existing.find(key) : existing.end();
      return it != existing.end() && it->is_string() ? it->get<std::string>() : "?";
    };
    if (text("fingerprint") != fingerprint) {
      if (!force) {
        fail(dir_,
             "holds results of a different experiment ('" + text("name") + "' from " +
                 text("file") +
                 ", or an earlier version of this file); use --force to replace them or --out "
                 "to choose another folder");
      }
      start_afresh = true;
    }
  } else if (holds_other_files(dir_)) {
    if (!force) refuse_foreign_folder(dir_);
    start_afresh = true;
  }
  if (start_afresh && fs::exists(results)) {
    fs::rename(results, dir_ / "results.jsonl.previous", ec);
    if (ec) fail(results, "cannot move old results aside: " + ec.message());
  }
  const nlohmann::json header_json = {{"name", spec.name},
                                      {"file", spec.file},
                                      {"fingerprint", fingerprint},
                                      {"experiment", spec.to_json()}};
  write_file_atomically(header, header_json.dump(2) + "\n");
  ResultsFile existing_results = load_records(results, /*repair=*/true);
  skipped_ = std::move(existing_results.skipped);
  for (auto& record : existing_results.records) {
    // The key first: json's assignment takes its argument by value, and C++17 evaluates the
    // right side of `=` first, which would move the record away before its id is read.
    const std::string id = record["case_id"].get<std::string>();
    finished_[id] = std::move(record);
  }
  fd_ = ::open(results.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(results, std::string("cannot open for appending: ") + std::strerror(errno));
}

ResultsStore::~ResultsStore() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void ResultsStore::append(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
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
  const fs::path results = dir / "results.jsonl";
  if (!fs::exists(results)) fail(dir, "no results.jsonl here (run the experiment first)");
  ResultsFile file = load_records(results, /*repair=*/false);
  std::stable_sort(file.records.begin(), file.records.end(), [](const auto& a, const auto& b) {
    return a.value("case_index", uint64_t{0}) < b.value("case_index", uint64_t{0});
  });
  return file;
}

std::vector<nlohmann::json> read_results(const fs::path& dir) {
  return read_results_file(dir).records;
}

}  // namespace simprec::experiments
