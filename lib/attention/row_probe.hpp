// A probe of one query row of one problem: the intermediate values the site-by-site engine
// computes for that row in the forward pass, per key block in the order it visits them (the row
// max before and after the block, the exponent's row shift, alpha and the roundings that formed
// it, the row sum l, every key's score, the roundings of its exponent and P before and after its
// cast, the row's O accumulator), then l, O and the LSE with the roundings that formed it. Enough
// to recompute the row by hand; what `validate --locate` prints (lib/validate/locate.hpp).
//
// A run given no probe (RunOptions::probe, attention.hpp) records nothing: each hook is one test
// of a null pointer, and no value is computed differently with a probe or without.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "lib/attention/site.hpp"

namespace simprec::attention {

// One rounding at a site: the value rounded (its high part, where it was exact in two doubles)
// and the result.
struct ProbedRounding {
  Site site;
  double exact;
  double value;
};

// One key of the probed row in a key block.
struct ProbedKey {
  int64_t key = 0;
  double score = 0;  // S as the softmax takes it (-inf: masked)
  // The roundings that turned the score into P (exp_impl's exponent argument at exp_arg, the
  // exponential at exp; standard attention's division by l at p_norm), in order.
  std::vector<ProbedRounding> steps;
  double p = 0;       // P before its cast (standard attention: before the division by l)
  double p_cast = 0;  // P as P.V takes it, after p_cast
};

// One key block of the probed row, as the online softmax takes it (standard attention: one block
// of every key).
struct ProbedBlock {
  int64_t tile = 0;   // the key block's index
  int64_t split = 0;  // the key/value split it belongs to (kv_splits)
  int64_t first_key = 0, keys = 0;
  double m_old = -std::numeric_limits<double>::infinity();  // the row max before the block
  double m_block = -std::numeric_limits<double>::infinity();
  double m_new = -std::numeric_limits<double>::infinity();  // after it
  double shift = 0;  // the exponent's row shift from m_new (exp_impl's offset)
  bool rescaled = false;
  double alpha = 1;                         // where rescaled
  std::vector<ProbedRounding> alpha_steps;  // the roundings that formed alpha (rescale)
  std::vector<double> l;                    // the row sum's partial sums after the block
  std::vector<ProbedKey> key_values;        // the block's keys in order
  std::vector<double> acc;                  // the row's O accumulator after the block's P.V
};

struct RowProbe {
  // The row to record: problem (batch x heads index) and query row.
  int64_t problem = 0, row = 0;

  std::vector<ProbedBlock> blocks;
  double l = std::numeric_limits<double>::quiet_NaN();  // the final row sum (NaN: none, splits)
  std::vector<double> o_norm;                           // O normalised, before o_out
  std::vector<double> o;                                // O as written
  double lse = std::numeric_limits<double>::quiet_NaN();
  std::vector<ProbedRounding> lse_steps;  // the roundings that formed the LSE (lse_impl)
  bool recorded = false;                  // the forward pass ran for the row

  // Engine side. While `active`, the row's hooks record; while `capture` is set, every rounding
  // of the probed problem's arithmetic is appended to it.
  bool active = false;
  int64_t split = 0;
  std::vector<ProbedRounding>* capture = nullptr;

  void begin() {
    const int64_t p = problem, r = row;
    *this = RowProbe{};
    problem = p;
    row = r;
    active = true;
  }
  void rounded(Site site, double exact, double value) const {
    if (capture) capture->push_back({site, exact, value});
  }
};

// Appends the roundings of its scope to `into`, where a probe is given.
class ProbeCapture {
 public:
  ProbeCapture(RowProbe* probe, std::vector<ProbedRounding>* into) : probe_(probe) {
    if (probe_) probe_->capture = into;
  }
  ~ProbeCapture() {
    if (probe_) probe_->capture = nullptr;
  }
  ProbeCapture(const ProbeCapture&) = delete;
  ProbeCapture& operator=(const ProbeCapture&) = delete;

 private:
  RowProbe* probe_;
};

}  // namespace simprec::attention
