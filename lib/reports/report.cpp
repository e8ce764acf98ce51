#include "lib/reports/report.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "lib/experiments/results_store.hpp"
#include "lib/limits/output_folder.hpp"
#include "lib/reports/comparisons.hpp"
#include "lib/reports/plots.hpp"
#include "lib/reports/result_view.hpp"
#include "lib/reports/summary_csv.hpp"

namespace simprec::reports {
namespace {

namespace fs = std::filesystem;

// Paper B: how much more the flash presets deviate than the baseline, and how that moves with N
// (the RMS ratios flash_vs_baseline_vs_key_tiles.png plots).
void flash_vs_baseline_verdict(const std::vector<nlohmann::json>& records,
                               std::vector<std::string>& out) {
  for (const auto& [name, ratios] : baseline_ratios(records)) {
    const BaselineRatio &first = ratios.front(), &last = ratios.back();
    std::ostringstream line;
    line << name << " deviates " << fmt(first.rms, 3) << "x as much as the baseline";
    if (ratios.size() > 1)
      line << " at N = " << first.seq_len << " and " << fmt(last.rms, 3)
           << "x at N = " << last.seq_len;
    line << " (RMS error of O against fp64)";
    if (ratios.size() > 1) {
      line << ": the gap "
           << (last.rms > first.rms * 1.1
                   ? "grows with sequence length"
                   : (last.rms < first.rms / 1.1 ? "shrinks with sequence length"
                                                 : "does not change much with sequence length"));
    }
    out.push_back(line.str() + ".");
  }
}

// Paper A: significant bias, its sources, and what the mitigations do to it.
void bias_verdict(const std::vector<nlohmann::json>& records, std::vector<std::string>& out) {
  size_t unbiased = 0;
  const size_t lines_before = out.size();
  std::map<std::string, const nlohmann::json*> unmitigated;
  for (const auto& r : records) {
    const CaseView c{r};
    if (c.mitigations() == "-" && c.has_output("o"))
      unmitigated[c.key_without({"mitigations", "name"})] = &r;
  }
  for (const auto& r : records) {
    const CaseView c{r};
    if (!c.has_output("o") || c.mitigations() != "-") continue;
    const double z = c.metric("o", "bias_z");
    if (std::isnan(z)) continue;
    if (std::fabs(z) < 3) {
      ++unbiased;
      continue;
    }
    std::ostringstream line;
    line << describe(c) << " on " << c.input_name() << " (N = " << c.seq_len() << ", seed "
         << c.seed() << "): the bias of O is " << fmt(c.metric("o", "bias"), 3) << " +- "
         << fmt(c.metric("o", "bias_se"), 2) << " (z = " << fmt(z, 3) << " across " << c.dim(0)
         << " independent draws): "
         << (std::fabs(z) >= 5
                 ? "significant, consistently " + std::string(z < 0 ? "negative" : "positive")
                 : (std::fabs(z) >= 3 ? "borderline" : "no significant bias"));
    const double mz = c.metric("o", "magnitude_bias_z");
    if (std::fabs(z) >= 3 && std::fabs(mz) >= 3) {
      line << " (magnitudes pushed " << (mz > 0 ? "outward" : "inward") << ", z = " << fmt(mz, 3)
           << ")";
    }
    const double dz = c.metric("delta", "bias_z");
    if (!std::isnan(dz)) line << "; D = rowsum(dO*O) error z = " << fmt(dz, 3);
    if (const auto* a = c.attribution();
        a && std::fabs(z) >= 3 && a->contains("sites") && !(*a)["sites"].empty()) {
      line << "; the sites that explain it: ";
      int shown = 0;
      for (const auto& s : (*a)["sites"]) {
        const double exact = number_in(s, "explained_exact"), sr = number_in(s, "explained_sr");
        if (shown == 3 || std::max(exact, sr) < 0.1) break;
        line << (shown ? ", " : "") << s.value("site", "?") << " ("
             << fmt(100 * std::max(exact, sr), 3) << "% "
             << (sr > exact ? "when rounded stochastically" : "when made exact") << ")";
        ++shown;
      }
      if (shown == 0) line << "no single site (each explains under 10%)";
    }
    for (const auto& m : records) {
      const CaseView mc{m};
      if (mc.mitigations() == "-" || !mc.has_output("o")) continue;
      const auto it = unmitigated.find(mc.key_without({"mitigations", "name"}));
      if (it == unmitigated.end() || it->second != &r) continue;
      const double mz = mc.metric("o", "bias_z");
      if (std::isnan(mz)) {
        const std::string cause = mc.nonfinite_cause();
        line << "; with " << mc.mitigations() << " O is not finite ("
             << fmt(100 * mc.nonfinite_share("o"), 3) << "% of O NaN or infinite: "
             << (cause.empty() ? "no row sum is 0 or infinite" : cause) << ")";
        continue;
      }
      line << "; with " << mc.mitigations() << " z = " << fmt(mz, 3);
      if (std::fabs(z) >= 3)
        line << (std::fabs(mz) < 3 ? " (removed: under 3 standard errors)" : " (not removed)");
    }
    out.push_back(line.str() + ".");
  }
  if (unbiased > 0) {
    const bool others = out.size() > lines_before;
    out.push_back(std::to_string(unbiased) + (others ? " other" : "") +
                  " unmitigated configuration" + (unbiased > 1 ? "s show" : " shows") +
                  " no significant bias of O (|z| < 3 across draws).");
  }
}

// Where each mitigation holds: per configuration it was applied to, the inputs on which it
// removed a significant bias of O, those where it left one (of the same or the opposite sign),
// those where it made O NaN or infinite (with the cause), and those that had no bias to remove.
void mitigation_verdict(const std::vector<nlohmann::json>& records, std::vector<std::string>& out) {
  struct Outcomes {
    std::vector<std::string> removed, left, opposite, nonfinite, unbiased;
  };
  std::map<std::string, Outcomes> by_mitigation;  // "`m` on preset (format)" -> outcomes
  for (const auto& [mitigated, unmitigated] : mitigation_pairs(records)) {
    const CaseView c{*mitigated}, b{*unmitigated};
    const std::string where = c.input_name() + " (N = " + std::to_string(c.seq_len()) + ")";
    Outcomes& o = by_mitigation["`" + c.mitigations() + "` on " + c.preset() + " (" + c.format() +
                                (c.causal() ? ", causal" : "") + ")"];
    const double before = b.metric("o", "bias_z"), after = c.metric("o", "bias_z");
    if (c.nonfinite_mismatch("o") > 0 || std::isnan(after)) {
      const std::string cause = c.nonfinite_cause();
      o.nonfinite.push_back(where + ": " + fmt(100 * c.nonfinite_share("o"), 3) +
                            "% of O NaN or infinite" + (cause.empty() ? "" : ", " + cause));
    } else if (!(std::fabs(before) >= 3)) {
      o.unbiased.push_back(where + ": z " + fmt(before, 3) + " -> " + fmt(after, 3));
    } else if (std::fabs(after) < 3) {
      o.removed.push_back(where + ": z " + fmt(before, 3) + " -> " + fmt(after, 3) +
                          ((after > 0) != (before > 0) ? " (of the other sign)" : ""));
    } else if ((after > 0) != (before > 0)) {
      o.opposite.push_back(where + ": z " + fmt(before, 3) + " -> " + fmt(after, 3));
    } else {
      o.left.push_back(where + ": z " + fmt(before, 3) + " -> " + fmt(after, 3));
    }
  }
  const auto list = [](const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : "; ") + i;
    return s;
  };
  for (const auto& [name, o] : by_mitigation) {
    std::string line = name + ": ";
    std::vector<std::string> parts;
    if (!o.removed.empty()) parts.push_back("holds (removed the bias of O) on " + list(o.removed));
    if (!o.opposite.empty())
      parts.push_back("fails, leaving a bias of the opposite sign, on " + list(o.opposite));
    if (!o.left.empty())
      parts.push_back("fails, leaving a bias of the same sign, on " + list(o.left));
    if (!o.nonfinite.empty()) parts.push_back("fails with non-finite O on " + list(o.nonfinite));
    if (!o.unbiased.empty())
      parts.push_back("had no significant bias to remove on " + list(o.unbiased));
    for (size_t i = 0; i < parts.size(); ++i) line += (i ? "; it " : "it ") + parts[i];
    out.push_back(line + ".");
  }
}

void deviation_table(const std::vector<nlohmann::json>& records, std::ostream& md) {
  md << "| # | implementation | preset | format | tile | mitigations | input | N | O max abs | O "
        "RMS | O rel. Frobenius | O bias +- s.e. (z) | D bias z | dQ rel. Frob. | dK rel. Frob. | "
        "dV rel. Frob. | W1(O) |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : records) {
    const CaseView c{r};
    md << "| " << r.value("case_index", 0) << " | " << c.impl_name() << " | " << c.preset() << " | "
       << c.format() << " | " << c.tile() << " | " << c.mitigations() << " | " << c.input_name()
       << " | " << c.seq_len() << " | ";
    if (c.failed()) {
      md << "failed: " << r.value("error", "") << " | | | | | | | | |\n";
      continue;
    }
    md << c.max_abs_text("o") << " | " << fmt(c.metric("o", "rms")) << " | "
       << fmt(c.metric("o", "rel_frobenius")) << " | " << fmt(c.metric("o", "bias")) << " +- "
       << fmt(c.metric("o", "bias_se"), 2) << " (" << fmt(c.metric("o", "bias_z"), 3) << ") | "
       << fmt(c.metric("delta", "bias_z"), 3) << " | " << fmt(c.metric("dq", "rel_frobenius"))
       << " | " << fmt(c.metric("dk", "rel_frobenius")) << " | "
       << fmt(c.metric("dv", "rel_frobenius")) << " | " << fmt(c.metric("o", "wasserstein1"))
       << " |\n";
  }
}

void baseline_table(const std::vector<nlohmann::json>& records, std::ostream& md) {
  const auto pairs = baseline_pairs(records);
  if (pairs.empty()) return;
  md << "\n## Flash vs baseline\n\nDeviation of each implementation divided by that of `"
     << baseline_name(records) << "` on the same inputs and format (paper B's comparison).\n\n"
     << "`key tiles` is ceil(N / Bc); `max per draw` is each draw's max |O - O_ref| (paper B's "
        "metric), mean +- standard deviation across draws.\n\n"
     << "| implementation | format | tile | input | N | seed | ratio of O RMS error | ratio of O "
        "max abs error | key tiles | max per draw | baseline max per draw |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& p : pairs) {
    const CaseView t{*p.test}, b{*p.baseline};
    const long long bc = t.run_tile().second;
    md << "| " << t.impl_name() << " | " << t.format() << " | " << t.tile() << " | "
       << t.input_name() << " | " << t.seq_len() << " | " << t.seed() << " | "
       << fmt(t.metric("o", "rms") / b.metric("o", "rms")) << " | "
       << fmt(t.metric("o", "max_abs") / b.metric("o", "max_abs")) << " | "
       << (bc > 0 ? std::to_string((t.seq_len() + bc - 1) / bc) : "-") << " | "
       << fmt(t.metric("o", "draw_max_abs_mean")) << " +- "
       << fmt(t.metric("o", "draw_max_abs_sd"), 2) << " | "
       << fmt(b.metric("o", "draw_max_abs_mean")) << " +- "
       << fmt(b.metric("o", "draw_max_abs_sd"), 2) << " |\n";
  }
}

void attribution_tables(const std::vector<nlohmann::json>& records, std::ostream& md) {
  bool header = false;
  for (const auto& r : records) {
    const CaseView c{r};
    const auto* a = c.attribution();
    if (!a || !a->contains("sites")) continue;
    if (!header) {
      md << "\n## Attribution\n\nEach site made exact (and, separately, rounded stochastically) "
            "with every other "
            "site as configured; `explained` is the share of the output's bias that disappears.\n";
      header = true;
    }
    md << "\n### " << describe(c) << " on " << c.input_name() << ", N = " << c.seq_len()
       << ": bias of " << a->value("output", "o") << " " << fmt(number_in(*a, "bias"))
       << " (z = " << fmt(number_in(*a, "bias_z"), 3) << ")\n\n"
       << "| rank | site | bias with site exact (z) | explained | bias with site SR (z) | "
          "explained by SR |\n"
       << "|---|---|---|---|---|---|\n";
    int rank = 1;
    for (const auto& s : (*a)["sites"]) {
      md << "| " << rank++ << " | " << s.value("site", "?") << " | "
         << fmt(number_in(s, "bias_exact")) << " (" << fmt(number_in(s, "bias_z_exact"), 3)
         << ") | " << fmt(100 * number_in(s, "explained_exact"), 3) << "% | "
         << fmt(number_in(s, "bias_sr")) << " (" << fmt(number_in(s, "bias_z_sr"), 3) << ") | "
         << fmt(100 * number_in(s, "explained_sr"), 3) << "% |\n";
    }
  }
}

void mitigation_table(const std::vector<nlohmann::json>& records, std::ostream& md) {
  bool header = false;
  for (const auto& [mitigated, unmitigated] : mitigation_pairs(records)) {
    const CaseView c{*mitigated};
    if (!header) {
      md << "\n## Mitigations\n\n| preset | format | input | N | mitigation | O bias z before | "
            "after | D bias z "
            "before | after | O RMS before | after | O NaN or inf after | cause "
            "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
      header = true;
    }
    const CaseView b{*unmitigated};
    md << "| " << c.preset() << " | " << c.format() << " | " << c.input_name() << " | "
       << c.seq_len() << " | " << c.mitigations() << " | " << fmt(b.metric("o", "bias_z"), 3)
       << " | " << fmt(c.metric("o", "bias_z"), 3) << " | " << fmt(b.metric("delta", "bias_z"), 3)
       << " | " << fmt(c.metric("delta", "bias_z"), 3) << " | " << fmt(b.metric("o", "rms"))
       << " | " << fmt(c.metric("o", "rms")) << " | " << fmt(100 * c.nonfinite_share("o"), 3)
       << "% | " << (c.nonfinite_cause().empty() ? "-" : c.nonfinite_cause()) << " |\n";
  }
}

// Cases with NaN or infinite outputs where the reference is finite come first: none of their
// statistics can be read as a result.
void nonfinite_verdict(const std::vector<nlohmann::json>& records, std::vector<std::string>& out) {
  std::string cases;
  size_t count = 0;
  for (const auto& r : records) {
    const CaseView c{r};
    for (const char* output : kOutputs) {
      if (c.nonfinite_mismatch(output) == 0) continue;
      ++count;
      if (count <= 10) {
        cases += (cases.empty() ? "" : ", ") + std::string("#") +
                 std::to_string(r.value("case_index", uint64_t{0})) + " " + output;
        if (std::string(output) == "o" && !c.nonfinite_cause().empty())
          cases += " (" + c.nonfinite_cause() + ")";
      }
    }
  }
  if (count == 0) return;
  out.push_back(std::to_string(count) + " output" + (count == 1 ? " has" : "s have") +
                " NaN or infinite values where the reference is finite (" + cases +
                (count > 10 ? ", ..." : "") +
                "): their error statistics are not finite and say nothing about bias.");
}

}  // namespace

std::vector<std::string> verdict(const std::vector<nlohmann::json>& records) {
  std::vector<std::string> lines;
  nonfinite_verdict(records, lines);
  flash_vs_baseline_verdict(records, lines);
  bias_verdict(records, lines);
  mitigation_verdict(records, lines);
  return lines;
}

static ReportFiles write_report_from(const fs::path& dir, const experiments::ResultsFile& results) {
  const auto& records = results.records;
  ReportFiles files;
  files.skipped_note = experiments::skipped_lines_text(dir / "results.jsonl", results.skipped);
  files.csv = dir / "summary.csv";
  write_summary_csv(records, files.csv);
  const PlotResult plots = make_plots(dir, records);
  files.plots = plots.files;
  files.plot_note = plots.note;

  // experiment.json only adds the name, file and fingerprint: one that is not JSON is left out,
  // one that is a link, FIFO or larger than its bound is refused by the reader.
  const limits::OutputFolder folder(dir, /*create=*/false);
  nlohmann::json header = nlohmann::json::object();
  if (folder.contains("experiment.json")) {
    header = nlohmann::json::parse(
        folder.read_file("experiment.json", "a results folder's experiment.json")
            .read_all(limits::kMaxJsonBytes),
        nullptr, /*allow_exceptions=*/false);
  }
  if (!header.is_object()) header = nlohmann::json::object();
  size_t failed = 0;
  for (const auto& r : records) failed += r.contains("error");
  std::ostringstream md;
  const std::string name = records.empty() ? header.value("name", "experiment")
                                           : records[0].value("experiment", "experiment");
  md << "# " << name << "\n\n";
  if (header.contains("experiment")) {
    const std::string description = header["experiment"].value("description", "");
    if (!description.empty()) md << description << "\n\n";
  }
  md << "Produced by `simprec run " << header.value("file", "EXPERIMENT.toml") << " --out "
     << dir.string() << "` with simprec "
     << (records.empty() ? SIMPREC_VERSION : records[0].value("simprec_version", "?"))
     << " (experiment fingerprint " << header.value("fingerprint", "?")
     << "); rebuilt from `results.jsonl` by "
     << "`simprec report " << dir.string() << "`. " << records.size() << " cases, " << failed
     << " failed. "
     << (files.skipped_note.empty() ? "" : "Not counted: " + files.skipped_note + ". ")
     << "Errors are measured against the fp64 reference on the same inputs; bias standard errors "
        "are "
        "taken across the independent draws of the batch dimension.\n\n";
  md << "## Verdict\n\n";
  const auto lines = verdict(records);
  if (lines.empty())
    md << "- Nothing to conclude: no case had both the data and a comparison to draw on.\n";
  for (const auto& line : lines) md << "- " << line << "\n";
  md << "\n## Deviation and bias per configuration\n\n";
  deviation_table(records, md);
  baseline_table(records, md);
  attribution_tables(records, md);
  mitigation_table(records, md);
  md << "\n## Plots\n\n";
  if (files.plots.empty())
    md << (plots.note.empty() ? "No plot applies to these results." : plots.note) << "\n";
  for (const auto& p : files.plots)
    md << "![" << p.stem().string() << "](" << p.filename().string() << ")\n\n";
  files.markdown = dir / "report.md";
  folder.write_file("report.md", md.str());
  return files;
}

ReportFiles write_report(const fs::path& dir) {
  try {
    return write_report_from(dir, experiments::read_results_file(dir));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error((dir / "results.jsonl").string() +
                             ": a record does not have the layout docs/experiments.md describes "
                             "(" +
                             e.what() + ")");
  }
}

}  // namespace simprec::reports
