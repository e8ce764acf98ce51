#include "lib/discover/gemm_discovery.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "emulation/bulk.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/gemm/gemm_engine.hpp"
#include "lib/gemm/gemm_numerics.hpp"
#include "lib/gemm/split_k.hpp"
#include "lib/mma/batched_mma.hpp"

namespace simprec::discover {
namespace {

using Clock = std::chrono::steady_clock;

// Rows of A every candidate runs on first: a few, spread over M.
constexpr int kFirstRows = 4;
// Candidates the ranking shows (and, at least, runs on every row).
constexpr size_t kShown = 5;
constexpr int kMaxPieces = 64;
constexpr int kPromotions[] = {32, 64, 128, 256, 512};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string value_text(float x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(x));
  return text;
}

// An instruction model whose input formats hold A and B, with their encodings.
struct Held {
  const TensorCoreModel* model = nullptr;
  std::vector<uint16_t> a, b;
};

// The encodings of `format` in `array`, or the reason it does not hold them.
std::optional<std::vector<uint16_t>> held_as(const NpyArray& array, const Format& format,
                                             const char* what, std::string& why) {
  try {
    const std::vector<uint32_t> bits = encodings(array, format, what);
    for (const uint32_t b : bits) {
      if (format.width() < 16 && (b >> format.width()) != 0) {
        why = std::string(what) + ": encoding " + std::to_string(b) + " does not fit " +
              format.name() + " (" + std::to_string(format.width()) + " bits)";
        return std::nullopt;
      }
    }
    return std::vector<uint16_t>(bits.begin(), bits.end());
  } catch (const std::invalid_argument& e) {
    why = e.what();
    return std::nullopt;
  }
}

std::optional<Held> hold(const TensorCoreModel& model, const NpyArray& a, const NpyArray& b,
                         std::string& why) {
  auto ea = held_as(a, model.input_a, "A", why);
  if (!ea) return std::nullopt;
  auto eb = held_as(b, model.input_b, "B", why);
  if (!eb) return std::nullopt;
  return Held{&model, std::move(*ea), std::move(*eb)};
}

// A spec to run: its numerics (out: what the run rounds to) and the output formats its result
// is compared in (rounding an fp32 result once more, as the engine's last step does).
struct Candidate {
  gemm::GemmNumerics numerics;
  size_t held = 0;
  std::vector<Format> outs;
};

// One candidate in one output format, on the rows it ran on.
struct Scored {
  size_t candidate = 0;
  Format out = formats::fp32;
  int64_t differing = 0;
  std::optional<GemmMiss> first;
  bool every_row = false;
  std::string spec;  // named once it is ranked
  int items = 0;
};

// The spec's text from the preset that says it in fewest items (the first such preset).
std::pair<std::string, int> named(gemm::GemmNumerics g, const Format& out) {
  g.out = out;
  std::string best;
  int best_items = 0;
  for (const gemm::GemmPreset& p : gemm::gemm_presets()) {
    if (gemm::make_gemm_preset(p.name).block_scales != gemm::BlockScales::kNone) continue;
    g.preset = std::string(p.name);
    const std::string text = gemm::canonical_gemm_numerics(g);
    const int items = static_cast<int>(std::count(text.begin(), text.end(), ','));
    if (best.empty() || items < best_items) {
      best = text;
      best_items = items;
    }
  }
  return {best, best_items};
}

class GemmSearch {
 public:
  GemmSearch(const GemmRecording& r, const GemmDiscoverOptions& o) : r_(r), o_(o) {}

  GemmDiscoveryResult run();

 private:
  void log(const std::string& line) {
    result_.lines.push_back(line);
    if (o_.log) o_.log(line);
  }
  bool past_deadline() const {
    return o_.time_limit &&
           std::chrono::duration<double>(Clock::now() - began_).count() >= *o_.time_limit;
  }
  void check_arrays();
  void find_models();
  void make_candidates();
  // Runs candidate c on `rows` of A and scores it in each of its output formats.
  std::vector<Scored> score(size_t c, const std::vector<int64_t>& rows);

  const GemmRecording& r_;
  const GemmDiscoverOptions& o_;
  Clock::time_point began_ = Clock::now();
  int64_t m_ = 0, n_ = 0, k_ = 0;
  std::vector<Held> held_;
  std::vector<gemm::GemmNumerics> families_;
  std::vector<Format> outs_;
  std::vector<Candidate> candidates_;
  GemmDiscoveryResult result_;
};

void GemmSearch::check_arrays() {
  if (!r_.a || !r_.b || !r_.d) throw std::invalid_argument("a GEMM needs A, B and D");
  const NpyArray &a = *r_.a, &b = *r_.b, &d = *r_.d;
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0]) {
    throw std::invalid_argument("A " + shape_text(a.shape) + " and B " + shape_text(b.shape) +
                                ": expected M x K and K x N");
  }
  m_ = a.shape[0];
  k_ = a.shape[1];
  n_ = b.shape[1];
  if (m_ < 1 || n_ < 1 || k_ < 1 || m_ > INT32_MAX || n_ > INT32_MAX || k_ > INT32_MAX) {
    throw std::invalid_argument("A " + shape_text(a.shape) + " and B " + shape_text(b.shape) +
                                ": M, N and K must each be in [1, 2^31)");
  }
  if (d.shape != std::vector<int64_t>{m_, n_}) {
    throw std::invalid_argument("D " + shape_text(d.shape) + ": expected (" + std::to_string(m_) +
                                ", " + std::to_string(n_) + "), M x N of A and B");
  }
  for (const auto& [array, what] : {std::pair{r_.d, "D"}, std::pair{r_.scale_a, "scale_a"},
                                    std::pair{r_.scale_b, "scale_b"}, std::pair{r_.bias, "bias"}}) {
    if (array && array->type != NpyType::kFloat32) {
      throw std::invalid_argument(std::string(what) + ": dtype " + npy_type_name(array->type) +
                                  "; expected float32 values");
    }
  }
  // The engine checks these too, but on the first rows only a candidate runs on.
  for (const auto& [array, what, count, per] :
       {std::tuple{r_.scale_a, "scale_a", m_, "one per row"},
        std::tuple{r_.scale_b, "scale_b", n_, "one per column"}}) {
    if (array && array->size() != 1 && array->size() != count) {
      throw std::invalid_argument(std::string(what) + ": " + std::to_string(array->size()) +
                                  " values; expected 1 (tensor-wise) or " + std::to_string(count) +
                                  " (" + per + ")");
    }
  }
  if (r_.bias && r_.bias->size() != n_) {
    throw std::invalid_argument("bias: " + std::to_string(r_.bias->size()) + " values; expected " +
                                std::to_string(n_) + " (one per output column)");
  }
  for (const Format& f : {formats::fp32, formats::bf16, formats::fp16}) {
    std::string why;
    if (held_as(d, f, "D", why)) outs_.push_back(f);
  }
}

void GemmSearch::find_models() {
  std::vector<const TensorCoreModel*> models;
  for (const std::string& family : o_.families) {
    gemm::GemmNumerics g = gemm::parse_gemm_numerics(family);
    if (g.block_scales != gemm::BlockScales::kNone) {
      throw std::invalid_argument("--family " + family +
                                  ": block-scaled GEMMs are not searched (their block scales "
                                  "cannot be given); give a family with block_scales=none");
    }
    std::string why;
    if (!hold(*g.instruction, *r_.a, *r_.b, why)) {
      throw std::invalid_argument("--family " + family + ": instruction=" + g.instruction->name +
                                  " does not take these operands: " + why);
    }
    families_.push_back(g);
    if (std::find(models.begin(), models.end(), g.instruction) == models.end())
      models.push_back(g.instruction);
  }
  if (o_.families.empty()) {
    for (const TensorCoreModel& model : tensor_core_models()) {
      if (model.accumulator == formats::fp32) models.push_back(&model);
    }
  }
  std::string why;
  for (const TensorCoreModel* model : models) {
    if (auto h = hold(*model, *r_.a, *r_.b, why)) held_.push_back(std::move(*h));
  }
  if (held_.empty()) {
    throw std::invalid_argument(
        "A (" + std::string(npy_type_name(r_.a->type)) + ") and B (" + npy_type_name(r_.b->type) +
        "): no tensor-core model with an fp32 accumulator takes them (" + why + ")");
  }
}

void GemmSearch::make_candidates() {
  const bool scaled = r_.scale_a || r_.scale_b;
  const bool row = (r_.scale_a && r_.scale_a->size() > 1) || (r_.scale_b && r_.scale_b->size() > 1);
  const auto index_of = [&](const TensorCoreModel* model) {
    for (size_t i = 0; i < held_.size(); ++i) {
      if (held_[i].model == model) return i;
    }
    return held_.size();
  };
  const gemm::Scaling scaling = !scaled ? gemm::Scaling::kNone
                                : row   ? gemm::Scaling::kRow
                                        : gemm::Scaling::kTensor;
  // Each family as given first, in its own output format (its scaling: the scales' shapes).
  for (const gemm::GemmNumerics& g : families_) {
    candidates_.push_back(Candidate{g, index_of(g.instruction), {g.out}});
    gemm::GemmNumerics& added = candidates_.back().numerics;
    added.scaling = scaling;
    // cublas-sm90 weighs the GEMM's output size: the whole one, also where a few rows run.
    if (added.split_k->name() == "cublas-sm90" && !added.problem_m) {
      added.problem_m = m_;
      added.problem_n = n_;
    }
  }
  std::set<std::string> lengths_text;
  for (size_t h = 0; h < held_.size(); ++h) {
    const TensorCoreModel& model = *held_[h].model;
    // Pieces of whole 128-byte K tiles, as even as that allows (the last shorter).
    const int64_t k_tile = std::max(1, 1024 / model.input_a.width());
    std::vector<int64_t> lengths{k_};
    for (int pieces = 2; pieces <= kMaxPieces; ++pieces) {
      const int64_t length = ((k_ + pieces - 1) / pieces + k_tile - 1) / k_tile * k_tile;
      if (length < k_ && std::find(lengths.begin(), lengths.end(), length) == lengths.end())
        lengths.push_back(length);
    }
    std::vector<int> promotions{0};
    if (model.input_a.width() <= 8)
      promotions.insert(promotions.end(), std::begin(kPromotions), std::end(kPromotions));
    std::vector<gemm::ScaleOrder> orders{gemm::ScaleOrder::kAlpha};
    if (scaled) orders.push_back(gemm::ScaleOrder::kBThenA);
    for (const int64_t length : lengths) {
      for (const int promote : promotions) {
        // A promotion interval as long as a piece never promotes: the same as none.
        if (promote && promote >= length) continue;
        for (const gemm::ScaleOrder order : orders) {
          gemm::GemmNumerics g = gemm::make_gemm_preset("chain");
          g.instruction = &model;
          g.promote_every = promote;
          g.split_k = &gemm::split_k_none();
          if (length < k_) {
            g.split_k = &gemm::parse_split_k("length:" + std::to_string(length), g.split_value);
          }
          g.scaling = scaling;
          g.scale_order = order;
          candidates_.push_back(Candidate{g, h, outs_});
        }
      }
    }
  }
}

std::vector<Scored> GemmSearch::score(size_t c, const std::vector<int64_t>& rows) {
  const Candidate& cand = candidates_[c];
  const Held& held = held_[cand.held];
  const bool every_row = static_cast<int64_t>(rows.size()) == m_;
  std::vector<uint16_t> a_rows;
  std::vector<float> scale_rows;
  gemm::GemmOperands o;
  o.m = static_cast<int>(rows.size());
  o.n = static_cast<int>(n_);
  o.k = static_cast<int>(k_);
  o.b = held.b;
  if (every_row) {
    o.a = held.a;
  } else {
    for (const int64_t i : rows)
      a_rows.insert(a_rows.end(), held.a.begin() + i * k_, held.a.begin() + (i + 1) * k_);
    o.a = a_rows;
  }
  if (r_.scale_a) {
    const std::span<const float> sa = r_.scale_a->as<float>();
    if (sa.size() == static_cast<size_t>(m_) && m_ > 1 && !every_row) {
      for (const int64_t i : rows) scale_rows.push_back(sa[i]);
      o.scale_a = scale_rows;
    } else {
      o.scale_a = sa;
    }
  }
  if (r_.scale_b) o.scale_b = r_.scale_b->as<float>();
  if (r_.bias) o.bias = r_.bias->as<float>();
  const std::vector<float> values = gemm::run_gemm(cand.numerics, o, o_.threads);
  ++result_.candidates;
  const std::span<const float> d = r_.d->as<float>();
  std::vector<Scored> scored;
  for (const Format& out : cand.outs) {
    std::vector<float> x = values;
    if (out != cand.numerics.out) {
      round_to_values<float>(x, x, BulkRounding{out, Rounding{}, RandomStream{}, 0, 1});
    }
    Scored s;
    s.candidate = c;
    s.out = out;
    s.every_row = every_row;
    for (size_t r = 0; r < rows.size(); ++r) {
      for (int64_t j = 0; j < n_; ++j) {
        const float want = d[static_cast<size_t>(rows[r] * n_ + j)];
        const float got = x[r * static_cast<size_t>(n_) + j];
        const bool same = std::bit_cast<uint32_t>(want) == std::bit_cast<uint32_t>(got) ||
                          (std::isnan(want) && std::isnan(got));
        if (same) continue;
        if (!s.differing) s.first = GemmMiss{rows[r], j, want, got};
        ++s.differing;
      }
    }
    scored.push_back(std::move(s));
  }
  return scored;
}

GemmDiscoveryResult GemmSearch::run() {
  check_arrays();
  find_models();
  make_candidates();
  result_.outputs = m_ * n_;
  std::string outs_text;
  for (const Format& f : outs_) outs_text += (outs_text.empty() ? "" : "|") + f.name();
  log("gemm M=" + std::to_string(m_) + " N=" + std::to_string(n_) + " K=" + std::to_string(k_) +
      ": A " + npy_type_name(r_.a->type) + ", B " + npy_type_name(r_.b->type) + "; D holds " +
      outs_text);
  std::string models_text;
  for (const Held& h : held_) models_text += (models_text.empty() ? "" : " ") + h.model->name;
  log("space: " + std::to_string(candidates_.size()) + " runs over " +
      std::to_string(held_.size()) + " instruction models (" + models_text +
      "), split_k, promote, scale_order; out " + outs_text);

  std::vector<int64_t> first_rows;
  for (int i = 0; i < kFirstRows; ++i) {
    const int64_t row = kFirstRows == 1 ? 0 : (m_ - 1) * i / (kFirstRows - 1);
    if (first_rows.empty() || first_rows.back() != row) first_rows.push_back(row);
  }
  // The first rows: every candidate (the first run also checks the scales' and bias' sizes).
  std::vector<Scored> screened;
  for (size_t c = 0; c < candidates_.size(); ++c) {
    if (c > 0 && past_deadline()) {
      result_.stopped = true;
      break;
    }
    for (Scored& s : score(c, first_rows)) screened.push_back(std::move(s));
  }
  std::stable_sort(screened.begin(), screened.end(),
                   [](const Scored& x, const Scored& y) { return x.differing < y.differing; });
  const int64_t fewest = screened.front().differing;
  size_t kept = 0;
  while (kept < screened.size() && (screened[kept].differing == fewest || kept < kShown)) ++kept;
  if (result_.stopped) kept = 1;
  log("first rows: " + std::to_string(result_.candidates) + " runs on " +
      std::to_string(first_rows.size()) + " of " + std::to_string(m_) + " rows; " +
      std::to_string(kept) +
      " specs on to every row (fewest differing there: " + std::to_string(fewest) + ")");

  // Every row: the survivors, each candidate run once for all its output formats.
  std::vector<int64_t> all_rows(static_cast<size_t>(m_));
  for (int64_t i = 0; i < m_; ++i) all_rows[static_cast<size_t>(i)] = i;
  std::vector<Scored> ranked;
  std::set<size_t> run_on_all;
  for (size_t i = 0; i < kept; ++i) {
    const size_t c = screened[i].candidate;
    if (!run_on_all.insert(c).second) continue;
    if (!ranked.empty() && past_deadline()) {
      result_.stopped = true;
      break;
    }
    if (screened[i].every_row) {
      for (const Scored& s : screened)
        if (s.candidate == c) ranked.push_back(s);
      continue;
    }
    for (Scored& s : score(c, all_rows)) ranked.push_back(std::move(s));
  }
  for (Scored& s : ranked)
    std::tie(s.spec, s.items) = named(candidates_[s.candidate].numerics, s.out);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Scored& x, const Scored& y) {
    return std::tie(x.differing, x.items) < std::tie(y.differing, y.items);
  });
  // Two candidates can name one spec (a family as given and the same searched): keep the first.
  std::set<std::string> seen;
  std::erase_if(ranked, [&](const Scored& s) { return !seen.insert(s.spec).second; });

  log("closest (differing outputs of " + std::to_string(result_.outputs) + "):");
  for (size_t i = 0; i < std::min(kShown, ranked.size()); ++i) {
    const gemm::GemmNumerics& g = candidates_[ranked[i].candidate].numerics;
    const int length = g.split_k->piece_length(g, static_cast<int>(m_), static_cast<int>(n_),
                                               static_cast<int>(k_));
    const int64_t pieces = (k_ + length - 1) / length;
    log("  " + std::to_string(i + 1) + ". " + ranked[i].spec + "  " +
        std::to_string(ranked[i].differing) + " (K in " + std::to_string(pieces) +
        (pieces == 1 ? " piece)" : " pieces)"));
  }
  const Scored& best = ranked.front();
  for (size_t i = 1; i < ranked.size() && ranked[i].differing == best.differing; ++i)
    result_.ties.push_back(ranked[i].spec);
  if (!result_.ties.empty()) {
    std::string text;
    for (size_t i = 0; i < std::min<size_t>(result_.ties.size(), 8); ++i)
      text += (i ? ", " : "") + result_.ties[i];
    if (result_.ties.size() > 8)
      text += " and " + std::to_string(result_.ties.size() - 8) + " more";
    log("ties (as many outputs agree): " + text);
  }
  result_.spec = best.spec;
  result_.differing = best.differing;
  result_.first_miss = best.first;
  result_.bit_exact = best.differing == 0;
  result_.seconds = std::chrono::duration<double>(Clock::now() - began_).count();
  char timing[96];
  std::snprintf(timing, sizeof timing, " (%.1f s, %lld runs)", result_.seconds,
                static_cast<long long>(result_.candidates));
  std::string verdict;
  if (best.differing == 0) {
    verdict = "bit-exact on all " + std::to_string(result_.outputs) + " outputs";
  } else {
    verdict = std::to_string(best.differing) + " of " + std::to_string(result_.outputs) +
              " outputs differ; the first at row " + std::to_string(best.first->row) + ", column " +
              std::to_string(best.first->column) + ": D " + value_text(best.first->recorded) +
              ", spec " + value_text(best.first->emulated);
  }
  log("result " + std::string(result_.stopped ? "stopped at the time limit: " : "") + verdict +
      timing);
  log("spec " + result_.spec);
  return result_;
}

}  // namespace

GemmDiscoveryResult discover_gemm(const GemmRecording& recording,
                                  const GemmDiscoverOptions& options) {
  return GemmSearch(recording, options).run();
}

}  // namespace simprec::discover
