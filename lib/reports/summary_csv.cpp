#include "lib/reports/summary_csv.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "lib/limits/output_folder.hpp"
#include "lib/reports/result_view.hpp"

namespace simprec::reports {
namespace {

constexpr const char* kMetrics[] = {"max_abs", "rms",    "rel_frobenius",    "bias",
                                    "bias_se", "bias_z", "magnitude_bias_z", "wasserstein1"};

constexpr const char* kNonfiniteCounts[] = {"nan_count", "inf_count", "nonfinite_mismatch"};

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string number(double x) {
  if (std::isnan(x)) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", x);
  return buffer;
}

}  // namespace

std::string fmt(double x, int digits) {
  if (std::isnan(x)) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
  return buffer;
}

void write_summary_csv(const std::vector<nlohmann::json>& records,
                       const std::filesystem::path& file) {
  {
    std::ostringstream out;
    out << "case_index,case_id,implementation,preset,format,tile,causal,mitigations,set,input,"
           "generator,"
           "draws,heads,seq_len,head_dim,seed";
    for (const char* output : kOutputs) {
      for (const char* metric : kMetrics) out << ',' << output << '_' << metric;
    }
    // The NaN rule's counts (docs/experiments.md) come after the error, where columns are added.
    out << ",error";
    for (const char* output : kOutputs) {
      for (const char* count : kNonfiniteCounts) out << ',' << output << '_' << count;
    }
    out << "\n";
    for (const auto& r : records) {
      const CaseView c{r};
      out << r.value("case_index", 0) << ',' << r.value("case_id", "") << ','
          << csv_field(c.impl_name()) << ',' << csv_field(c.preset()) << ',' << c.format() << ','
          << c.tile() << ',' << (c.causal() ? "true" : "false") << ',' << csv_field(c.mitigations())
          << ',' << csv_field(c.overrides()) << ',' << csv_field(c.input_name()) << ','
          << c.generator() << ',' << c.dim(0) << ',' << c.dim(1) << ',' << c.dim(2) << ','
          << c.dim(3) << ',' << c.seed();
      for (const char* output : kOutputs) {
        for (const char* metric : kMetrics) out << ',' << number(c.metric(output, metric));
      }
      out << ',' << csv_field(r.value("error", ""));
      for (const char* output : kOutputs) {
        for (const char* count : kNonfiniteCounts) out << ',' << number(c.metric(output, count));
      }
      out << '\n';
    }
    limits::write_file_replacing(file, out.str());
  }
}

}  // namespace simprec::reports
