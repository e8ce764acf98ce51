#include "lib/experiments/results_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace simprec::experiments {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw std::runtime_error(path.string() + ": " + what);
}

// Reads the complete lines of results.jsonl; truncates the file after the last good record
// when `repair` (a line without its newline, or one that is not JSON, is a torn write).
std::vector<nlohmann::json> load_records(const fs::path& file, bool repair) {
  std::vector<nlohmann::json> records;
  std::ifstream in(file, std::ios::binary);
  if (!in) return records;
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t good_end = 0, start = 0;
  while (start < content.size()) {
    const size_t newline = content.find('\n', start);
    if (newline == std::string::npos) break;
    try {
      records.push_back(nlohmann::json::parse(content.substr(start, newline - start)));
    } catch (const nlohmann::json::exception&) {
      break;
    }
    good_end = newline + 1;
    start = newline + 1;
  }
  if (repair && good_end < content.size()) {
    if (::truncate(file.c_str(), static_cast<off_t>(good_end)) != 0) {
      fail(file, std::string("cannot cut off a torn record: ") + std::strerror(errno));
    }
  }
  return records;
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
      existing = nlohmann::json::object();
    }
    if (existing.value("fingerprint", "") != fingerprint) {
      if (!force) {
        fail(dir_,
             "holds results of a different experiment ('" + existing.value("name", "?") +
                 "' from " + existing.value("file", "?") +
                 ", or an earlier version of this file); use --force to replace them or --out "
                 "to choose another folder");
      }
      start_afresh = true;
    }
  } else if (!fs::is_empty(dir_)) {
    if (!force) {
      fail(dir_,
           "exists and is not a simprec results folder (no experiment.json); use --force or "
           "--out to choose another folder");
    }
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
  for (auto& record : load_records(results, /*repair=*/true)) {
    if (!record.contains("case_id")) continue;
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

std::vector<nlohmann::json> read_results(const fs::path& dir) {
  const fs::path results = dir / "results.jsonl";
  if (!fs::exists(results)) fail(dir, "no results.jsonl here (run the experiment first)");
  auto records = load_records(results, /*repair=*/false);
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.value("case_index", 0) < b.value("case_index", 0);
  });
  return records;
}

}  // namespace simprec::experiments
