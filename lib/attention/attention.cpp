#include "lib/attention/attention.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "emulation/elementary.hpp"
#include "emulation/tiled_random.hpp"
#include "lib/attention/beta_rowmax.hpp"
#include "lib/attention/float_flash.hpp"
#include "lib/attention/footprint.hpp"
#include "lib/attention/product.hpp"

namespace simprec::attention {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_size(const std::vector<double>& x, int64_t expected, const char* name) {
  if (static_cast<int64_t>(x.size()) != expected) {
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(x.size()) +
                                " elements, the shape needs " + std::to_string(expected));
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      throw std::invalid_argument(std::string(name) + " has a non-finite value at flat index " +
                                  std::to_string(i));
    }
  }
}

// Runs fn(problem) for every problem on `threads` threads; each problem writes only its own
// slices, so the result does not depend on the thread count.
template <class Fn>
void parallel_problems(int64_t problems, unsigned threads, Fn&& fn) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<int64_t>(threads, problems));
  if (threads <= 1) {
    for (int64_t p = 0; p < problems; ++p) fn(p);
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int64_t p = next++; p < problems; p = next++) {
        try {
          fn(p);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// The per-row state that turns a score into an exponent argument: built from the row max in the
// forward pass and from the log-sum-exp in the backward pass.
struct RowShift {
  double offset = 0;  // natural: round(m*scale) or round(lse); exp2: round(m*c) or round(lse*log2
                      // e); exact: scale*m or lse
  bool valid = false;
  ExpImpl impl = ExpImpl::kNatural;  // the pass's exp implementation
};

struct Engine {
  const AttentionConfig& cfg;
  AttentionShape shape;
  double scale;
  double scale_log2;  // c = scale*log2(e) rounded at exp_arg
  double log2e;       // log2(e) rounded at exp_arg
  ExpImpl bwd_exp_impl;
  std::array<SiteRounder, kSiteCount> r;
  std::vector<ProductSite> products;  // indexed through product_of
  std::array<int, kSiteCount> product_index{};
  // Index layout of random streams: (problem, row, column, step).
  uint64_t rows_max, cols_max, steps_max;
  bool device_exp2 = false;  // exp2 values come from cfg.exp2_table where it applies
  int tiled_p_bits = 0;      // > 0: p_cast rounds with tiled_random::p_draw bits
  int lanes = 1;             // partial row sums

  Engine(const AttentionConfig& config, const AttentionShape& s) : cfg(config), shape(s) {
    check_structure(config);
    scale = softmax_scale(config, s);
    lanes = config.rowsum_lanes;
    const auto is_exp2 = [](ExpImpl e) { return e == ExpImpl::kExp2Fma || e == ExpImpl::kExp2; };
    const bool exp2_impl =
        is_exp2(config.exp_impl) || is_exp2(config.bwd_exp_impl.value_or(config.exp_impl));
    device_exp2 = config.exp2_table && exp2_impl;
    const SiteSpec& p_cast = config.site(Site::kPCast);
    if (config.tiled_random && p_cast.rounding.mode == RoundingMode::kStochastic) {
      tiled_p_bits = p_cast.rounding.sr_bits;
    }
    for (int i = 0; i < kSiteCount; ++i) {
      const Site site = static_cast<Site>(i);
      r[i] = SiteRounder(config.site(site), config.seed, site);
      product_index[i] = -1;
      if (site_accumulates(site)) {
        product_index[i] = static_cast<int>(products.size());
        products.emplace_back(site, config.site(site), config.seed);
      }
    }
    scale_log2 = rd(Site::kExpArg, scale * std::numbers::log2e);
    log2e = rd(Site::kExpArg, std::numbers::log2e);
    bwd_exp_impl = config.bwd_exp_impl.value_or(config.exp_impl);
    rows_max = std::max(s.nq, s.nk);
    // Partial row sums take columns 0..lanes-1 (and the final combination 0..2) of their rows.
    // Warp-group row sums take columns up to 7 past a group's first column.
    cols_max = std::max({s.nq, s.nk, s.d, s.dv, lanes > 1 ? int64_t{8} : int64_t{0}}) + 1 +
               (config.rowsum_block == RowsumBlock::kWarpGroups ? 8 : 0);
    const int64_t tiles =
        std::max(s.nq, s.nk) / std::max(1, std::min(config.block_rows, config.block_cols)) + 2;
    steps_max =
        static_cast<uint64_t>(tiles) * (std::max<int64_t>({s.nq, s.nk, s.d, s.dv}) + 2) + 16;
  }

  static void check_structure(const AttentionConfig& c) {
    if (c.rowsum_lanes != 1 && c.rowsum_lanes != 4) {
      throw std::invalid_argument("rowsum_lanes must be 1 or 4, not " +
                                  std::to_string(c.rowsum_lanes));
    }
    if (c.algorithm != Algorithm::kFlash) return;
    if (c.rowsum_block == RowsumBlock::kWarpGroups &&
        (c.rowsum_lanes != 1 || c.pv_mode == PvMode::kPerBlock)) {
      throw std::invalid_argument(
          "rowsum_block=warp-groups needs rowsum_lanes=1 and pv_mode=fused");
    }
    if (c.rowsum_lanes != 1 && c.pv_mode == PvMode::kPerBlock) {
      throw std::invalid_argument("rowsum_lanes=4 needs pv_mode=fused");
    }
    if (c.rescale != RescaleImpl::kExact && c.exp_impl != ExpImpl::kExp2Fma &&
        c.exp_impl != ExpImpl::kExp2) {
      throw std::invalid_argument("rescale=" + std::string(to_string(c.rescale)) +
                                  " needs exp_impl exp2-fma or exp2, not " +
                                  std::string(to_string(c.exp_impl)));
    }
    const SiteSpec& p_cast = c.site(Site::kPCast);
    if (c.tiled_random && p_cast.rounding.mode == RoundingMode::kStochastic &&
        32 % p_cast.rounding.sr_bits != 0) {
      throw std::invalid_argument(
          "tiled random bits at p_cast need a bit count that divides 32 (1, 2, 4, 8, 16, 32), "
          "not " +
          std::to_string(p_cast.rounding.sr_bits));
    }
  }

  double rd(Site s, double x, uint64_t idx = 0) const { return r[static_cast<int>(s)](x, idx); }
  double rd_exact(Site s, double hi, double lo, uint64_t idx = 0) const {
    return r[static_cast<int>(s)].round_exact(hi, lo, idx);
  }
  const ProductSite& product(Site s) const { return products[product_index[static_cast<int>(s)]]; }

  // A unique random index for (problem, row, column, step).
  uint64_t idx(int64_t p, int64_t i, int64_t j, int64_t step = 0) const {
    return ((static_cast<uint64_t>(p) * rows_max + i) * cols_max + j) * steps_max + step;
  }
  IndexMap imap(int64_t p, int64_t row0, int64_t col0, int64_t step) const {
    return IndexMap{idx(p, row0, col0, step), cols_max * steps_max, steps_max};
  }
};

class Head {
 public:
  Head(const Engine& e, const AttentionInputs& in, AttentionOutputs& out, int64_t p,
       std::array<tracing::SiteTrace, kSiteCount>* traces, std::vector<uint32_t>* exp2_misses)
      : e_(e), s_(e.shape), p_(p), traces_(traces), exp2_misses_(exp2_misses) {
    q_ = in.q.data() + p * s_.nq * s_.d;
    k_ = in.k.data() + p * s_.nk * s_.d;
    v_ = in.v.data() + p * s_.nk * s_.dv;
    o_ = out.o.data() + p * s_.nq * s_.dv;
    lse_ = out.lse.data() + p * s_.nq;
    if (in.has_grad()) {
      do_ = in.d_out.data() + p * s_.nq * s_.dv;
      dq_ = out.dq.data() + p * s_.nq * s_.d;
      dk_ = out.dk.data() + p * s_.nk * s_.d;
      dv_ = out.dv.data() + p * s_.nk * s_.dv;
      delta_ = out.delta.data() + p * s_.nq;
    }
    kt_ = transpose(k_, s_.nk, s_.d);
    // Float copies of the inputs for the fp32 product path, when every value is a float.
    q32_ = as_floats(q_, s_.nq * s_.d);
    k32_ = as_floats(k_, s_.nk * s_.d);
    kt32_ = as_floats(kt_.data(), s_.nk * s_.d);
    v32_ = as_floats(v_, s_.nk * s_.dv);
    if (do_) {
      const std::vector<double> vt = transpose(v_, s_.nk, s_.dv);
      vt32_ = as_floats(vt.data(), s_.nk * s_.dv);
      do32_ = as_floats(do_, s_.nq * s_.dv);
    }
  }

  void forward() {
    if (e_.cfg.algorithm == Algorithm::kFlash) {
      forward_flash();
    } else {
      forward_standard();
    }
  }
  void backward() {
    if (e_.cfg.algorithm == Algorithm::kFlash) {
      backward_flash();
    } else {
      backward_standard();
    }
  }

 private:
  static std::vector<double> transpose(const double* x, int64_t rows, int64_t cols) {
    std::vector<double> t(rows * cols);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
    }
    return t;
  }
  static std::vector<float> as_floats(const double* x, int64_t n) {
    std::vector<float> f(n);
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) {
      f[i] = static_cast<float>(x[i]);
      ok &= static_cast<double>(f[i]) == x[i];
    }
    if (!ok) f.clear();
    return f;
  }
  // A float view at offset, or nullptr when the tensor is not all floats.
  static const float* f32(const std::vector<float>& v, int64_t offset) {
    return v.empty() ? nullptr : v.data() + offset;
  }
  tracing::SiteTrace* trace(Site s) const {
    return traces_ ? &(*traces_)[static_cast<int>(s)] : nullptr;
  }
  // Rounds at an elementwise site, recording the error when tracing.
  double at(Site s, double x, uint64_t index) const {
    const double y = e_.rd(s, x, index);
    if (traces_)
      (*traces_)[static_cast<int>(s)].record(e_.r[static_cast<int>(s)].format(), x, 0, y);
    return y;
  }
  double at_exact(Site s, double hi, double lo, uint64_t index) const {
    const double y = e_.rd_exact(s, hi, lo, index);
    if (traces_)
      (*traces_)[static_cast<int>(s)].record(e_.r[static_cast<int>(s)].format(), hi, lo, y);
    return y;
  }
  // round(a*b) and round(a + b) from the exact result.
  double mul_at(Site s, double a, double b, uint64_t index) const {
    double hi, lo;
    two_prod(a, b, hi, lo);
    return at_exact(s, hi, lo, index);
  }
  double add_at(Site s, double a, double b, uint64_t index) const {
    double hi, lo;
    two_sum(a, b, hi, lo);
    return at_exact(s, hi, lo, index);
  }
  // round(a / b) from the exact quotient q + r/b, r = a - q*b exactly.
  double div_at(Site s, double a, double b, uint64_t index) const {
    const double q = a / b;
    const double rem = std::fma(-q, b, a);
    return at_exact(s, q, rem / b, index);
  }
  bool masked(int64_t i, int64_t j) const { return e_.cfg.causal && j > i; }

  // Row shift from a max m (forward) or a log-sum-exp (backward).
  RowShift shift_from_max(double m, int64_t i) const {
    if (m == -kInf) return {};
    const uint64_t index = e_.idx(p_, i, 0, 1);
    const ExpImpl impl = e_.cfg.exp_impl;
    switch (impl) {
      case ExpImpl::kExact:
        return {e_.scale * m, true, impl};
      case ExpImpl::kNatural:
        return {mul_at(Site::kExpArg, m, e_.scale, index), true, impl};
      case ExpImpl::kExp2Fma:
      case ExpImpl::kExp2:
        return {mul_at(Site::kExpArg, m, e_.scale_log2, index), true, impl};
    }
    return {};
  }
  RowShift shift_from_lse(double lse, int64_t i) const {
    const uint64_t index = e_.idx(p_, i, 0, 2);
    const ExpImpl impl = e_.bwd_exp_impl;
    switch (impl) {
      case ExpImpl::kExact:
        return {lse, true, impl};
      case ExpImpl::kNatural:
        return {at(Site::kExpArg, lse, index), true, impl};
      case ExpImpl::kExp2Fma:
      case ExpImpl::kExp2: {
        const double log2e =
            e_.cfg.lse_log2e == LseLog2e::kFp32Log2e ? e_.log2e : std::numbers::log2e;
        return {mul_at(Site::kExpArg, lse, log2e, index), true, impl};
      }
    }
    return {};
  }

  // exp2(arg) at `site`: the device's value when the engine has a table, the site is fp32
  // round-to-nearest-even and arg is an fp32 value; otherwise (or when the table lacks arg,
  // which is recorded) exp2 rounded at the site.
  double exp2_at(Site site, double arg, uint64_t index) const {
    if (e_.device_exp2 && e_.r[static_cast<int>(site)].is_float_rne()) {
      const float f = static_cast<float>(arg);
      if (static_cast<double>(f) == arg) {
        const uint32_t bits = std::bit_cast<uint32_t>(f);
        if (const auto y = e_.cfg.exp2_table->find(bits)) {
          const double value = static_cast<double>(std::bit_cast<float>(*y));
          if (traces_)
            (*traces_)[static_cast<int>(site)].record(formats::fp32, std::exp2(arg), 0, value);
          return value;
        }
        exp2_misses_->push_back(bits);
      }
    }
    return exp_rounded(site, arg, index, /*base2=*/true);
  }

  // exp(arg) or exp2(arg) correctly rounded at `site` (its format, mode and random bits), not a
  // libm double rounded again: C libraries' exp2 is not correctly rounded on every argument.
  double exp_rounded(Site site, double arg, uint64_t index, bool base2) const {
    const SiteRounder& r = e_.r[static_cast<int>(site)];
    RoundingContext ctx(r.format(), r.rounding(), r.stream(), index);
    const double y = decode(ctx.format(), base2 ? exp2_of(ctx, arg) : exp_of(ctx, arg));
    if (traces_) {
      (*traces_)[static_cast<int>(site)].record(ctx.format(),
                                                base2 ? std::exp2(arg) : std::exp(arg), 0, y);
    }
    return y;
  }

  // P cast at p_cast; with tiled random bits the draw is the kernel's for (row i, column j).
  double cast_p(double p, int64_t i, int64_t j) const {
    if (e_.tiled_p_bits == 0) return at(Site::kPCast, p, e_.idx(p_, i, j, 0));
    const SiteRounder& r = e_.r[static_cast<int>(Site::kPCast)];
    const uint32_t draw =
        tiled_random::p_draw(e_.cfg.seed, static_cast<uint32_t>(p_), static_cast<uint32_t>(i),
                             static_cast<uint32_t>(j), e_.tiled_p_bits);
    const double y = r.round_with_random(p, draw);
    if (traces_) (*traces_)[static_cast<int>(Site::kPCast)].record(r.format(), p, 0, y);
    return y;
  }

  // Unnormalised probability of score s against the row shift, rounded at exp_arg and exp.
  double prob(double s, const RowShift& shift, uint64_t index) const {
    if (!shift.valid || s == -kInf) return 0.0;
    switch (shift.impl) {
      case ExpImpl::kExact: {
        const double arg = e_.scale * s - shift.offset;
        RoundingContext ctx(e_.r[static_cast<int>(Site::kExp)].format(),
                            e_.r[static_cast<int>(Site::kExp)].rounding(),
                            e_.r[static_cast<int>(Site::kExp)].stream(), index);
        const double y = decode(ctx.format(), exp_of(ctx, arg));
        if (traces_)
          (*traces_)[static_cast<int>(Site::kExp)].record(ctx.format(), std::exp(arg), 0, y);
        return y;
      }
      case ExpImpl::kNatural: {
        const double xs = mul_at(Site::kExpArg, s, e_.scale, index);
        const double arg = add_at(Site::kExpArg, xs, -shift.offset, index + 1);
        return exp_rounded(Site::kExp, arg, index, /*base2=*/false);
      }
      case ExpImpl::kExp2Fma: {
        // fma(s, c, -mc): s*c exactly, minus mc, one rounding.
        double ph, pl, h, l1, hi, lo;
        two_prod(s, e_.scale_log2, ph, pl);
        two_sum(ph, -shift.offset, h, l1);
        two_sum(h, l1 + pl, hi, lo);
        const double arg = at_exact(Site::kExpArg, hi, lo, index);
        return exp2_at(Site::kExp, arg, index);
      }
      case ExpImpl::kExp2: {
        const double xs = mul_at(Site::kExpArg, s, e_.scale_log2, index);
        const double arg = add_at(Site::kExpArg, xs, -shift.offset, index + 1);
        return exp2_at(Site::kExp, arg, index);
      }
    }
    return 0.0;
  }

  // The max the exponent subtracts for one block row: the row max, or paper A's shifted max.
  double block_max(const double* srow, int64_t n) const {
    double rm = -kInf;
    for (int64_t j = 0; j < n; ++j) rm = std::max(rm, srow[j]);
    if (!e_.cfg.beta_rowmax.enabled) return rm;
    return beta_block_max(srow, n, rm, e_.cfg.beta_rowmax, e_.scale);
  }

  // Scores of rows [i0, i1) against keys [j0, j1), causal mask applied.
  void scores(int64_t i0, int64_t i1, int64_t j0, int64_t j1, double* out, int64_t tile) const {
    const int64_t br = i1 - i0, bc = j1 - j0;
    e_.product(Site::kS).gemm(br, bc, s_.d, q_ + i0 * s_.d, s_.d, kt_.data() + j0, s_.nk, out, bc,
                              false, e_.imap(p_, i0, j0, tile * (s_.d + 1)), trace(Site::kS),
                              f32(q32_, i0 * s_.d), f32(kt32_, j0));
    for (int64_t i = 0; i < br; ++i) {
      for (int64_t j = 0; j < bc; ++j) {
        if (masked(i0 + i, j0 + j)) out[i * bc + j] = -kInf;
      }
    }
  }

  void forward_flash() {
    const int64_t nq = s_.nq, nk = s_.nk, dv = s_.dv;
    const int64_t br_max = e_.cfg.block_rows, bc_max = e_.cfg.block_cols;
    const int lanes = e_.lanes;
    std::vector<double> s(br_max * bc_max), pt(br_max * bc_max), block(br_max * dv), acc,
        terms(bc_max);
    std::vector<double> m, l;  // l: `lanes` partial sums per row
    std::vector<RowShift> shift(br_max);
    for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
      const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
      acc.assign(br * dv, 0.0);
      m.assign(br, -kInf);
      l.assign(br * lanes, 0.0);
      int64_t tile = 0;
      for (int64_t j0 = 0; j0 < nk; j0 += bc_max, ++tile) {
        const int64_t j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
        if (e_.cfg.causal && j0 > i1 - 1) break;
        scores(i0, i1, j0, j1, s.data(), tile);
        for (int64_t i = 0; i < br; ++i) {
          const int64_t gi = i0 + i;
          double* srow = s.data() + i * bc;
          const double m_block = block_max(srow, bc);
          const double m_new = std::max(m[i], m_block);
          double* orow = acc.data() + i * dv;
          if (m_new == -kInf) {  // every key of this block masked
            for (int64_t j = 0; j < bc; ++j) pt[i * bc + j] = 0;
            continue;
          }
          const RowShift next_shift = shift_from_max(m_new, gi);
          double* li = l.data() + i * lanes;
          // Rescale O and l when the max grows.
          if (m[i] != -kInf && m_new != m[i]) {
            const uint64_t ri = e_.idx(p_, gi, 0, tile * (dv + 3));
            double alpha;
            if (e_.cfg.rescale == RescaleImpl::kExact) {
              alpha = exp_rounded(Site::kORescale, e_.scale * (m[i] - m_new), ri, false);
            } else if (e_.cfg.rescale == RescaleImpl::kExp2Diff) {
              const double diff = add_at(Site::kORescale, m[i], -m_new, ri + dv + 2);
              const double arg = mul_at(Site::kORescale, diff, e_.scale_log2,
                                        e_.idx(p_, gi, 1, tile * (dv + 3) + dv + 2));
              alpha = exp2_at(Site::kORescale, arg, ri);
            } else {
              const double arg =
                  add_at(Site::kORescale, shift[i].offset, -next_shift.offset, ri + dv + 2);
              alpha = exp2_at(Site::kORescale, arg, ri);
            }
            for (int t = 0; t < lanes; ++t)
              li[t] = mul_at(Site::kORescale, li[t], alpha, e_.idx(p_, gi, t, tile * (dv + 3) + 1));
            for (int64_t c = 0; c < dv; ++c)
              orow[c] = mul_at(Site::kORescale, orow[c], alpha, ri + 2 + c);
          }
          m[i] = m_new;
          shift[i] = next_shift;
          double* prow = pt.data() + i * bc;
          for (int64_t j = 0; j < bc; ++j)
            prow[j] = prob(srow[j], shift[i], e_.idx(p_, gi, j0 + j, 10));
          const uint64_t si = e_.idx(p_, gi, 0, 3 + tile * (bc_max + 1));
          if (lanes > 1) {
            add_to_lanes(prow, bc, li, gi, tile, terms.data());
          } else if (e_.cfg.rowsum_block == RowsumBlock::kWarpGroups) {
            add_warp_groups(prow, bc, li, gi, tile, terms.data());
          } else if (e_.cfg.pv_mode == PvMode::kFused) {
            li[0] = e_.product(Site::kRowsum).sum(prow, bc, li[0], si, trace(Site::kRowsum));
          } else {  // the block's sum rounded, then added to l like the block's P.V to O
            const double block_sum =
                e_.product(Site::kRowsum).sum(prow, bc, 0.0, si, trace(Site::kRowsum));
            li[0] = add_at(Site::kOUpdate, li[0], block_sum, e_.idx(p_, gi, dv, tile));
          }
          for (int64_t j = 0; j < bc; ++j) prow[j] = cast_p(prow[j], gi, j0 + j);
        }
        const double* vt = v_ + j0 * dv;
        if (e_.cfg.pv_mode == PvMode::kFused) {
          e_.product(Site::kPvAcc)
              .gemm(br, dv, bc, pt.data(), bc, vt, dv, acc.data(), dv, true,
                    e_.imap(p_, i0, 0, tile * (bc_max + 1)), trace(Site::kPvAcc), nullptr,
                    f32(v32_, j0 * dv));
        } else {
          e_.product(Site::kPvAcc)
              .gemm(br, dv, bc, pt.data(), bc, vt, dv, block.data(), dv, false,
                    e_.imap(p_, i0, 0, tile * (bc_max + 1)), trace(Site::kPvAcc), nullptr,
                    f32(v32_, j0 * dv));
          for (int64_t x = 0; x < br * dv; ++x) {
            acc[x] =
                add_at(Site::kOUpdate, acc[x], block[x], e_.idx(p_, i0 + x / dv, x % dv, tile));
          }
        }
      }
      for (int64_t i = 0; i < br; ++i) {
        const int64_t gi = i0 + i;
        const double li = row_sum(l.data() + i * lanes, gi);
        const bool divide = e_.cfg.norm_mode == NormMode::kDivide;
        const double inv = divide ? 0.0 : at(Site::kONorm, 1.0 / li, e_.idx(p_, gi, 0, 0));
        for (int64_t c = 0; c < dv; ++c) {
          const double normalised =
              divide ? div_at(Site::kONorm, acc[i * dv + c], li, e_.idx(p_, gi, c, 1))
                     : mul_at(Site::kONorm, acc[i * dv + c], inv, e_.idx(p_, gi, c, 1));
          o_[gi * dv + c] = at(Site::kOOut, normalised, e_.idx(p_, gi, c, 0));
        }
        lse_[gi] = log_sum_exp(m[i], shift[i], li, gi);
      }
    }
  }

  // The forward pass's LSE from the row max m (its shift) and the row sum l (config.hpp, LseImpl).
  double log_sum_exp(double m, const RowShift& shift, double l, int64_t gi) const {
    const uint64_t index = e_.idx(p_, gi, 0, 0);
    switch (e_.cfg.lse_impl) {
      case LseImpl::kExact:
        break;
      case LseImpl::kFmaLog: {
        // fma(m, scale, round(log l)): m*scale exactly, plus the rounded log, one rounding.
        const double log_l = at(Site::kLse, std::log(l), index + 1);
        double ph, pl, h, l1, hi, lo;
        two_prod(m, e_.scale, ph, pl);
        two_sum(ph, log_l, h, l1);
        two_sum(h, l1 + pl, hi, lo);
        return at_exact(Site::kLse, hi, lo, index);
      }
      case LseImpl::kShiftDivLog2e:
        if (shift.valid && (shift.impl == ExpImpl::kExp2 || shift.impl == ExpImpl::kExp2Fma)) {
          const double natural = div_at(Site::kLse, shift.offset, e_.log2e, index + 1);
          return add_at(Site::kLse, natural, at(Site::kLse, std::log(l), index + 2), index);
        }
        break;
    }
    return at(Site::kLse, m * e_.scale + std::log(l), index);
  }

  // Adds one block row of P to the 4 partial row sums: partial t takes the block's columns j
  // with (j % 8) / 2 == t, in increasing order (the columns a thread of the quad holds).
  void add_to_lanes(const double* prow, int64_t bc, double* partial, int64_t gi, int64_t tile,
                    double* terms) const {
    const uint64_t step = 3 + tile * (e_.cfg.block_cols + 1);
    for (int t = 0; t < 4; ++t) {
      int64_t n = 0;
      for (int64_t j = 2 * t; j < bc; j += 8) {
        terms[n++] = prow[j];
        if (j + 1 < bc) terms[n++] = prow[j + 1];
      }
      partial[t] = e_.product(Site::kRowsum)
                       .sum(terms, n, partial[t], e_.idx(p_, gi, t, step), trace(Site::kRowsum));
    }
  }

  // Adds one block row of P to the row sum l as the memory-efficient kernel does: per group of 32
  // columns (a warp's), 4 lane sums from zero (lane t takes the group's columns j with
  // (j % 8) / 2 == t, in order), combined (l0 + l1) + (l2 + l3); the groups' sums are added to l
  // in order. Every addition rounds at rowsum.
  void add_warp_groups(const double* prow, int64_t bc, double* l, int64_t gi, int64_t tile,
                       double* terms) const {
    const uint64_t step = 3 + tile * (e_.cfg.block_cols + 1);
    for (int64_t g0 = 0; g0 < bc; g0 += 32) {
      const int64_t g1 = std::min(bc, g0 + 32);
      double lane[4];
      for (int t = 0; t < 4; ++t) {
        int64_t n = 0;
        for (int64_t j = g0 + 2 * t; j < g1; j += 8) {
          terms[n++] = prow[j];
          if (j + 1 < g1) terms[n++] = prow[j + 1];
        }
        lane[t] = e_.product(Site::kRowsum)
                      .sum(terms, n, 0.0, e_.idx(p_, gi, g0 + t, step), trace(Site::kRowsum));
      }
      const double low = add_at(Site::kRowsum, lane[0], lane[1], e_.idx(p_, gi, g0 + 4, step));
      const double high = add_at(Site::kRowsum, lane[2], lane[3], e_.idx(p_, gi, g0 + 5, step));
      const double group = add_at(Site::kRowsum, low, high, e_.idx(p_, gi, g0 + 6, step));
      l[0] = add_at(Site::kRowsum, l[0], group, e_.idx(p_, gi, g0 + 7, step));
    }
  }

  // The row sum from its partial sums: (l0 + l2) + (l1 + l3), each addition rounded at rowsum.
  double row_sum(const double* partial, int64_t gi) const {
    if (e_.lanes == 1) return partial[0];
    const double even = add_at(Site::kRowsum, partial[0], partial[2], e_.idx(p_, gi, 0, 0));
    const double odd = add_at(Site::kRowsum, partial[1], partial[3], e_.idx(p_, gi, 1, 0));
    return add_at(Site::kRowsum, even, odd, e_.idx(p_, gi, 2, 0));
  }

  // One block of rows of standard attention: S, P, l and the normalised P over all keys.
  // Fills s (scores), pn (normalised, at p_norm) and returns per-row lse through lse_out.
  void standard_rows(int64_t i0, int64_t i1, std::vector<double>& s, std::vector<double>& pn,
                     double* lse_out) const {
    const int64_t nk = s_.nk, br = i1 - i0;
    s.resize(br * nk);
    pn.resize(br * nk);
    scores(i0, i1, 0, nk, s.data(), 0);
    for (int64_t i = 0; i < br; ++i) {
      const int64_t gi = i0 + i;
      const double* srow = s.data() + i * nk;
      double* prow = pn.data() + i * nk;
      const double m = block_max(srow, nk);
      const RowShift shift = shift_from_max(m, gi);
      for (int64_t j = 0; j < nk; ++j) prow[j] = prob(srow[j], shift, e_.idx(p_, gi, j, 10));
      const double l =
          e_.product(Site::kRowsum).sum(prow, nk, 0.0, e_.idx(p_, gi, 0, 3), trace(Site::kRowsum));
      for (int64_t j = 0; j < nk; ++j) {
        prow[j] = div_at(Site::kPNorm, prow[j], l, e_.idx(p_, gi, j, 1));
      }
      if (lse_out) lse_out[i] = at(Site::kLse, m * e_.scale + std::log(l), e_.idx(p_, gi, 0, 0));
    }
  }

  void forward_standard() {
    const int64_t nq = s_.nq, nk = s_.nk, dv = s_.dv;
    const int64_t rows = std::max<int64_t>(1, e_.cfg.block_rows);
    std::vector<double> s, pn, acc;
    for (int64_t i0 = 0; i0 < nq; i0 += rows) {
      const int64_t i1 = std::min(nq, i0 + rows), br = i1 - i0;
      standard_rows(i0, i1, s, pn, lse_ + i0);
      for (int64_t x = 0; x < br * nk; ++x) pn[x] = cast_p(pn[x], i0 + x / nk, x % nk);
      acc.assign(br * dv, 0.0);
      e_.product(Site::kPvAcc)
          .gemm(br, dv, nk, pn.data(), nk, v_, dv, acc.data(), dv, false, e_.imap(p_, i0, 0, 0),
                trace(Site::kPvAcc), nullptr, f32(v32_, 0));
      for (int64_t x = 0; x < br * dv; ++x) {
        o_[i0 * dv + x] = at(Site::kOOut, acc[x], e_.idx(p_, i0 + x / dv, x % dv, 0));
      }
    }
  }

  // dS = P o (dP - D), rounded at ds (the difference, then the product; with grad_scale=ds
  // then its product with the softmax scale), then cast at ds_cast.
  double dscore(double p, double dp, double d, uint64_t index) const {
    if (p == 0) return 0.0;
    const double diff = add_at(Site::kDs, dp, -d, index);
    double ds = mul_at(Site::kDs, p, diff, index + 1);
    if (e_.cfg.grad_scale == GradScale::kScaleDs) ds = mul_at(Site::kDs, ds, e_.scale, index + 2);
    return at(Site::kDsCast, ds, index);
  }

  void backward_flash() {
    const int64_t nq = s_.nq, nk = s_.nk, d = s_.d, dv = s_.dv;
    const int64_t br_max = e_.cfg.block_rows, bc_max = e_.cfg.block_cols;
    const std::vector<double> vt = transpose(v_, nk, dv);
    std::vector<double> s(br_max * bc_max), p(br_max * bc_max), pc_t(bc_max * br_max),
        dp(br_max * bc_max), ds(br_max * bc_max), ds_t(bc_max * br_max);
    std::vector<double> dq_acc(nq * d, 0.0), dk_acc, dv_acc;
    std::vector<RowShift> shift(nq);
    for (int64_t i = 0; i < nq; ++i) shift[i] = shift_from_lse(lse_[i], i);
    // Preprocess: D per query row.
    if (e_.cfg.delta_mode == DeltaMode::kFromOutput) {
      for (int64_t i = 0; i < nq; ++i) delta_[i] = delta_from_output(i);
    } else {
      std::fill(delta_, delta_ + nq, 0.0);
      int64_t tile = 0;
      for (int64_t j0 = 0; j0 < nk; j0 += bc_max, ++tile) {
        const int64_t j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
        for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
          const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
          if (e_.cfg.causal && j0 > i1 - 1) continue;
          recompute_p(i0, i1, j0, j1, s.data(), p.data(), shift, tile);
          e_.product(Site::kDp).gemm(br, bc, dv, do_ + i0 * dv, dv, vt.data() + j0, nk, dp.data(),
                                     bc, false, e_.imap(p_, i0, j0, 0), nullptr);
          for (int64_t i = 0; i < br; ++i) {
            e_.product(Site::kD).gemm(1, 1, bc, dp.data() + i * bc, bc, p.data() + i * bc, 1,
                                      delta_ + i0 + i, 1, true,
                                      e_.imap(p_, i0 + i, 0, tile * (bc_max + 1)), trace(Site::kD));
          }
        }
      }
    }
    dk_acc.assign(nk * d, 0.0);
    dv_acc.assign(nk * dv, 0.0);
    const bool dq_partials = e_.cfg.dq_mode == DqMode::kBlockPartials;
    std::vector<double> dq_part(dq_partials ? br_max * d : 0);
    for (const auto& [tile, qtile] : backward_schedule()) {
      const int64_t j0 = tile * bc_max, j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
      const int64_t i0 = qtile * br_max, i1 = std::min(nq, i0 + br_max), br = i1 - i0;
      {
        recompute_p(i0, i1, j0, j1, s.data(), p.data(), shift, tile);
        // dV += P~^T dO
        for (int64_t i = 0; i < br; ++i) {
          for (int64_t j = 0; j < bc; ++j) {
            pc_t[j * br + i] = at(Site::kPCastBwd, p[i * bc + j], e_.idx(p_, i0 + i, j0 + j, 0));
          }
        }
        e_.product(Site::kDvAcc)
            .gemm(bc, dv, br, pc_t.data(), br, do_ + i0 * dv, dv, dv_acc.data() + j0 * dv, dv, true,
                  e_.imap(p_, j0, 0, qtile * (br_max + 1)), trace(Site::kDvAcc), nullptr,
                  f32(do32_, i0 * dv));
        // dP = dO V^T
        e_.product(Site::kDp).gemm(br, bc, dv, do_ + i0 * dv, dv, vt.data() + j0, nk, dp.data(), bc,
                                   false, e_.imap(p_, i0, j0, 0), trace(Site::kDp),
                                   f32(do32_, i0 * dv), f32(vt32_, j0));
        const bool cast_p = e_.cfg.ds_p == DsProb::kCast;
        for (int64_t i = 0; i < br; ++i) {
          for (int64_t j = 0; j < bc; ++j) {
            const double x = dscore(cast_p ? pc_t[j * br + i] : p[i * bc + j], dp[i * bc + j],
                                    delta_[i0 + i], e_.idx(p_, i0 + i, j0 + j, 0));
            ds[i * bc + j] = x;
            ds_t[j * br + i] = x;
          }
        }
        // dQ += dS~ K (scaled at the end); dK += dS~^T Q. With block partials, the key block's
        // product is chained from zero and then added to dQ with one rounding at dq_acc.
        double* dq_block = dq_acc.data() + i0 * d;
        e_.product(Site::kDqAcc)
            .gemm(br, d, bc, ds.data(), bc, k_ + j0 * d, d, dq_partials ? dq_part.data() : dq_block,
                  d, !dq_partials, e_.imap(p_, i0, 0, tile * (bc_max + 1)), trace(Site::kDqAcc),
                  nullptr, f32(k32_, j0 * d));
        if (dq_partials) {
          for (int64_t x = 0; x < br * d; ++x) {
            dq_block[x] = add_at(Site::kDqAcc, dq_block[x], dq_part[x],
                                 e_.idx(p_, i0 + x / d, x % d, tile * (bc_max + 1) + bc_max));
          }
        }
        e_.product(Site::kDkAcc)
            .gemm(bc, d, br, ds_t.data(), br, q_ + i0 * d, d, dk_acc.data() + j0 * d, d, true,
                  e_.imap(p_, j0, 0, qtile * (br_max + 1)), trace(Site::kDkAcc), nullptr,
                  f32(q32_, i0 * d));
      }
    }
    for (int64_t x = 0; x < nk * d; ++x) {
      dk_[x] = scaled_grad(Site::kDkAcc, dk_acc[x], e_.idx(p_, x / d, x % d, 1));
    }
    for (int64_t x = 0; x < nk * dv; ++x) {
      dv_[x] = at(Site::kGradOut, dv_acc[x], e_.idx(p_, x / dv, x % dv, 2));
    }
    for (int64_t x = 0; x < nq * d; ++x) {
      dq_[x] = scaled_grad(Site::kDqAcc, dq_acc[x], e_.idx(p_, x / d, x % d, 0));
    }
  }

  // dQ or dK from its accumulator (at site `acc`) as grad_scale says: scale*acc rounded once at
  // grad_out; acc*scale rounded at acc, then cast at grad_out; or acc cast (dS carried the scale).
  double scaled_grad(Site acc, double value, uint64_t index) const {
    switch (e_.cfg.grad_scale) {
      case GradScale::kExactProduct:
        return mul_at(Site::kGradOut, value, e_.scale, index);
      case GradScale::kFp32ThenCast:
        return at(Site::kGradOut, mul_at(acc, value, e_.scale, index), index);
      case GradScale::kScaleDs:
        return at(Site::kGradOut, value, index);
    }
    return 0.0;
  }

  // The (key block, query block) pairs of the flash backward pass in the order they run
  // (config.hpp, QueryOrder): each key block's query blocks in its own order; with split keys,
  // across key blocks by step, ties by key block.
  std::vector<std::pair<int64_t, int64_t>> backward_schedule() const {
    const int64_t br_max = e_.cfg.block_rows, bc_max = e_.cfg.block_cols;
    const int64_t q_tiles = (s_.nq + br_max - 1) / br_max, k_tiles = (s_.nk + bc_max - 1) / bc_max;
    QueryOrder order = e_.cfg.query_order;
    // PyTorch's split-keys heuristic: enough parallelism and few keys run a single split.
    if (order == QueryOrder::kSplitKeys && s_.problems() >= 256 && s_.nk <= 2 * bc_max) {
      order = QueryOrder::kAscending;
    }
    struct Step {
      int64_t step, tile, qtile;
    };
    std::vector<Step> steps;
    for (int64_t tile = 0; tile < k_tiles; ++tile) {
      const int64_t j0 = tile * bc_max;
      std::vector<int64_t> visible;
      for (int64_t qtile = 0; qtile < q_tiles; ++qtile) {
        const int64_t i1 = std::min(s_.nq, (qtile + 1) * br_max);
        if (!(e_.cfg.causal && j0 > i1 - 1)) visible.push_back(qtile);
      }
      if (order == QueryOrder::kDescending) std::reverse(visible.begin(), visible.end());
      if (order == QueryOrder::kSplitKeys && !e_.cfg.causal) {
        std::rotate(visible.begin(), visible.begin() + tile % q_tiles, visible.end());
      }
      for (size_t at = 0; at < visible.size(); ++at) {
        steps.push_back({static_cast<int64_t>(at), tile, visible[at]});
      }
    }
    // Split keys run the key blocks side by side, so dQ sees them in the order they reach it;
    // otherwise the key blocks come one after the other (dQ of a query block sees them in
    // increasing order: FlashAttention-2's order of its atomic adds is left to the hardware).
    if (order == QueryOrder::kSplitKeys) {
      std::stable_sort(steps.begin(), steps.end(),
                       [](const Step& a, const Step& b) { return a.step < b.step; });
    }
    std::vector<std::pair<int64_t, int64_t>> pairs;
    pairs.reserve(steps.size());
    for (const Step& x : steps) pairs.emplace_back(x.tile, x.qtile);
    return pairs;
  }

  // D_i = rowsum(dO o O) in the order delta_sum gives (config.hpp, DeltaSum), each addition
  // rounded at d (the threads' partial sums by d's accumulation model).
  double delta_from_output(int64_t i) const {
    const int64_t dv = s_.dv;
    const double* dorow = do_ + i * dv;
    const double* orow = o_ + i * dv;
    if (e_.cfg.delta_sum == DeltaSum::kSequential) {
      double di = 0.0;
      e_.product(Site::kD).gemm(1, 1, dv, dorow, dv, orow, 1, &di, 1, false, e_.imap(p_, i, 0, 0),
                                trace(Site::kD));
      return di;
    }
    int threads = 1, chunk = 8;
    if (e_.cfg.delta_sum == DeltaSum::kFa2) {
      const int64_t g = dv % 128 == 0 ? 128 : dv % 64 == 0 ? 64 : 32;
      threads = static_cast<int>(g / 8);
    } else {
      threads = std::max(1, e_.cfg.block_cols / 32);
      if (dv % 8 != 0) chunk = 1;
    }
    std::vector<double> partial(threads), a, b;
    for (int t = 0; t < threads; ++t) {
      a.clear();
      b.clear();
      for (int64_t c0 = static_cast<int64_t>(t) * chunk; c0 < dv; c0 += int64_t{threads} * chunk) {
        for (int64_t c = c0; c < std::min(dv, c0 + chunk); ++c) {
          a.push_back(dorow[c]);
          b.push_back(orow[c]);
        }
      }
      partial[t] = 0.0;
      e_.product(Site::kD).gemm(1, 1, static_cast<int64_t>(a.size()), a.data(),
                                static_cast<int64_t>(a.size()), b.data(), 1, &partial[t], 1, false,
                                e_.imap(p_, i, t, 0), trace(Site::kD));
    }
    // Butterfly all-reduce: after each step thread t holds its value plus thread (t ^ offset)'s.
    std::vector<int> offsets;
    for (int o = 1; o < threads; o *= 2) offsets.push_back(o);
    if (e_.cfg.delta_sum == DeltaSum::kFa2) std::reverse(offsets.begin(), offsets.end());
    std::vector<double> next(threads);
    for (size_t k = 0; k < offsets.size(); ++k) {
      for (int t = 0; t < threads; ++t) {
        next[t] = add_at(Site::kD, partial[t], partial[t ^ offsets[k]],
                         e_.idx(p_, i, t, 1 + static_cast<int64_t>(k)));
      }
      partial.swap(next);
    }
    return partial[0];
  }

  // P of rows [i0, i1) x keys [j0, j1) recomputed from the log-sum-exp.
  void recompute_p(int64_t i0, int64_t i1, int64_t j0, int64_t j1, double* s, double* p,
                   const std::vector<RowShift>& shift, int64_t tile) const {
    const int64_t br = i1 - i0, bc = j1 - j0;
    scores(i0, i1, j0, j1, s, tile);
    for (int64_t i = 0; i < br; ++i) {
      for (int64_t j = 0; j < bc; ++j) {
        p[i * bc + j] = prob(s[i * bc + j], shift[i0 + i], e_.idx(p_, i0 + i, j0 + j, 4));
      }
    }
  }

  void backward_standard() {
    const int64_t nq = s_.nq, nk = s_.nk, d = s_.d, dv = s_.dv;
    const int64_t rows = std::max<int64_t>(1, e_.cfg.block_rows);
    const std::vector<double> vt = transpose(v_, nk, dv);
    std::vector<double> pc_t(nk * nq), ds_t(nk * nq), s, pn, dp, ds, acc;
    for (int64_t i0 = 0; i0 < nq; i0 += rows) {
      const int64_t i1 = std::min(nq, i0 + rows), br = i1 - i0;
      standard_rows(i0, i1, s, pn, nullptr);
      dp.assign(br * nk, 0.0);
      ds.assign(br * nk, 0.0);
      e_.product(Site::kDp).gemm(br, nk, dv, do_ + i0 * dv, dv, vt.data(), nk, dp.data(), nk, false,
                                 e_.imap(p_, i0, 0, 0), trace(Site::kDp), f32(do32_, i0 * dv),
                                 f32(vt32_, 0));
      for (int64_t i = 0; i < br; ++i) {
        const int64_t gi = i0 + i;
        double di = 0.0;
        // Autograd's softmax backward: D = rowsum(dP o P) from the saved (normalised) P.
        e_.product(Site::kD).gemm(1, 1, nk, dp.data() + i * nk, nk, pn.data() + i * nk, 1, &di, 1,
                                  false, e_.imap(p_, gi, 0, 0), trace(Site::kD));
        delta_[gi] = di;
        for (int64_t j = 0; j < nk; ++j) {
          pc_t[j * nq + gi] = at(Site::kPCastBwd, pn[i * nk + j], e_.idx(p_, gi, j, 0));
          const double x = dscore(pn[i * nk + j], dp[i * nk + j], di, e_.idx(p_, gi, j, 0));
          ds[i * nk + j] = x;
          ds_t[j * nq + gi] = x;
        }
      }
      acc.assign(br * d, 0.0);
      e_.product(Site::kDqAcc)
          .gemm(br, d, nk, ds.data(), nk, k_, d, acc.data(), d, false, e_.imap(p_, i0, 0, 0),
                trace(Site::kDqAcc), nullptr, f32(k32_, 0));
      for (int64_t x = 0; x < br * d; ++x) {
        dq_[i0 * d + x] = scaled_grad(Site::kDqAcc, acc[x], e_.idx(p_, i0 + x / d, x % d, 0));
      }
    }
    acc.assign(nk * d, 0.0);
    e_.product(Site::kDkAcc)
        .gemm(nk, d, nq, ds_t.data(), nq, q_, d, acc.data(), d, false, e_.imap(p_, 0, 0, 0),
              trace(Site::kDkAcc), nullptr, f32(q32_, 0));
    for (int64_t x = 0; x < nk * d; ++x)
      dk_[x] = scaled_grad(Site::kDkAcc, acc[x], e_.idx(p_, x / d, x % d, 1));
    acc.assign(nk * dv, 0.0);
    e_.product(Site::kDvAcc)
        .gemm(nk, dv, nq, pc_t.data(), nq, do_, dv, acc.data(), dv, false, e_.imap(p_, 0, 0, 0),
              trace(Site::kDvAcc), nullptr, f32(do32_, 0));
    for (int64_t x = 0; x < nk * dv; ++x)
      dv_[x] = at(Site::kGradOut, acc[x], e_.idx(p_, x / dv, x % dv, 2));
  }

  const Engine& e_;
  AttentionShape s_;
  int64_t p_;
  std::array<tracing::SiteTrace, kSiteCount>* traces_;
  std::vector<uint32_t>* exp2_misses_;
  const double *q_, *k_, *v_, *do_ = nullptr;
  double *o_, *lse_, *dq_ = nullptr, *dk_ = nullptr, *dv_ = nullptr, *delta_ = nullptr;
  std::vector<double> kt_;
  std::vector<float> q32_, k32_, kt32_, v32_, vt32_, do32_;
};

}  // namespace

void AttentionInputs::validate() const {
  const AttentionShape& s = shape;
  check_shape(s);
  check_size(q, s.problems() * s.nq * s.d, "Q");
  check_size(k, s.problems() * s.nk * s.d, "K");
  check_size(v, s.problems() * s.nk * s.dv, "V");
  if (!d_out.empty()) check_size(d_out, s.problems() * s.nq * s.dv, "dO");
  if (has_forward()) {
    if (d_out.empty()) {
      throw std::invalid_argument(
          "O and LSE are given without dO: there is no backward pass to run");
    }
    check_size(o, s.problems() * s.nq * s.dv, "O");
    check_size(lse, s.problems() * s.nq, "LSE");
  }
}

double softmax_scale(const AttentionConfig& config, const AttentionShape& shape) {
  return config.scale ? *config.scale : 1.0 / std::sqrt(static_cast<double>(shape.d));
}

AttentionInputs round_inputs(const AttentionInputs& inputs, const AttentionConfig& config) {
  AttentionInputs rounded = inputs;
  const SiteRounder r(config.site(Site::kInput), config.seed, Site::kInput);
  uint64_t base = 0;
  for (std::vector<double>* x : {&rounded.q, &rounded.k, &rounded.v, &rounded.d_out}) {
    for (size_t i = 0; i < x->size(); ++i) (*x)[i] = r((*x)[i], base + i);
    base += x->size();
  }
  return rounded;
}

AttentionOutputs run_attention(const AttentionInputs& raw_inputs, const AttentionConfig& config,
                               FastPath fast_path) {
  raw_inputs.validate();
  if (config.block_rows < 1 || config.block_cols < 1) {
    throw std::invalid_argument("tile sizes must be positive");
  }
  const AttentionInputs inputs = round_inputs(raw_inputs, config);
  const AttentionShape& s = inputs.shape;
  const Engine engine(config, s);
  AttentionOutputs out;
  out.o.assign(s.problems() * s.nq * s.dv, 0.0);
  out.lse.assign(s.problems() * s.nq, 0.0);
  if (inputs.has_grad()) {
    out.dq.assign(s.problems() * s.nq * s.d, 0.0);
    out.dk.assign(s.problems() * s.nk * s.d, 0.0);
    out.dv.assign(s.problems() * s.nk * s.dv, 0.0);
    out.delta.assign(s.problems() * s.nq, 0.0);
  }
  if (inputs.has_forward()) {
    out.o = inputs.o;
    out.lse = inputs.lse;
  }
  std::vector<std::array<tracing::SiteTrace, kSiteCount>> traces(config.trace ? s.problems() : 0);
  std::vector<std::vector<uint32_t>> misses(s.problems());
  const bool float_flash = fast_path == FastPath::kAllowed && float_flash_applies(config);
  parallel_problems(s.problems(), config.threads, [&](int64_t p) {
    if (float_flash && run_float_flash(config, inputs, out, p)) return;
    Head head(engine, inputs, out, p, config.trace ? &traces[p] : nullptr, &misses[p]);
    if (!inputs.has_forward()) head.forward();
    if (inputs.has_grad()) head.backward();
    std::sort(misses[p].begin(), misses[p].end());
    misses[p].erase(std::unique(misses[p].begin(), misses[p].end()), misses[p].end());
  });
  // Merged in problem order, so the sums do not depend on the thread count.
  for (const auto& t : traces) {
    for (int i = 0; i < kSiteCount; ++i) out.traces[i].merge(t[i]);
  }
  for (const auto& m : misses) out.exp2_misses.insert(out.exp2_misses.end(), m.begin(), m.end());
  std::sort(out.exp2_misses.begin(), out.exp2_misses.end());
  out.exp2_misses.erase(std::unique(out.exp2_misses.begin(), out.exp2_misses.end()),
                        out.exp2_misses.end());
  return out;
}

AttentionOutputs run_attention_with_device_function(const AttentionInputs& inputs,
                                                    const AttentionConfig& config,
                                                    const DeviceFunction& exp2, int max_runs) {
  auto table = config.exp2_table ? std::make_shared<DeviceFunctionTable>(*config.exp2_table)
                                 : std::make_shared<DeviceFunctionTable>();
  AttentionConfig c = config;
  c.exp2_table = table;
  size_t missing = 0;
  for (int run = 0; run < max_runs; ++run) {
    AttentionOutputs out = run_attention(inputs, c);
    if (out.exp2_misses.empty()) return out;
    const std::vector<uint32_t> values = exp2(out.exp2_misses);
    if (values.size() != out.exp2_misses.size()) {
      throw std::runtime_error("the device exp2 returned " + std::to_string(values.size()) +
                               " values for " + std::to_string(out.exp2_misses.size()) +
                               " arguments");
    }
    for (size_t i = 0; i < values.size(); ++i) table->insert(out.exp2_misses[i], values[i]);
    missing = values.size();
  }
  throw std::runtime_error("the device exp2 table still lacked " + std::to_string(missing) +
                           " arguments after " + std::to_string(max_runs) + " runs");
}

namespace {

// C = A (m x k, lda) B (k x n, ldb) with every element a Dot2 (twice-working-precision) dot
// product in order of k, vectorised over the n outputs of a row.
void gemm_dot2(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
               int64_t ldb, double* c, int64_t ldc) {
  std::vector<double> sum(n), err(n);
  for (int64_t i = 0; i < m; ++i) {
    double* __restrict s = sum.data();
    double* __restrict e = err.data();
    for (int64_t j = 0; j < n; ++j) s[j] = e[j] = 0.0;
    for (int64_t x = 0; x < k; ++x) {
      const double av = a[i * lda + x];
      const double* __restrict bv = b + x * ldb;
      for (int64_t j = 0; j < n; ++j) {
        const double ph = av * bv[j];
        const double pl = std::fma(av, bv[j], -ph);
        const double t = s[j] + ph;
        const double bb = t - s[j];
        e[j] += ((s[j] - (t - bb)) + (ph - bb)) + pl;
        s[j] = t;
      }
    }
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = s[j] + e[j];
  }
}

std::vector<double> transposed(const double* x, int64_t rows, int64_t cols) {
  std::vector<double> t(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  }
  return t;
}

}  // namespace

AttentionOutputs reference_attention(const AttentionInputs& inputs, double scale, bool causal,
                                     unsigned threads) {
  inputs.validate();
  const AttentionShape& s = inputs.shape;
  AttentionOutputs out;
  out.o.assign(s.problems() * s.nq * s.dv, 0.0);
  out.lse.assign(s.problems() * s.nq, 0.0);
  const bool grad = inputs.has_grad();
  if (grad) {
    out.dq.assign(s.problems() * s.nq * s.d, 0.0);
    out.dk.assign(s.problems() * s.nk * s.d, 0.0);
    out.dv.assign(s.problems() * s.nk * s.dv, 0.0);
    out.delta.assign(s.problems() * s.nq, 0.0);
  }
  parallel_problems(s.problems(), threads, [&](int64_t p) {
    const int64_t nq = s.nq, nk = s.nk, d = s.d, dv = s.dv;
    const double* q = inputs.q.data() + p * nq * d;
    const double* k = inputs.k.data() + p * nk * d;
    const double* v = inputs.v.data() + p * nk * dv;
    double* o = out.o.data() + p * nq * dv;
    std::vector<double> prob(nq * nk, 0.0);  // scores, then normalised P
    {
      const std::vector<double> kt = transposed(k, nk, d);
      gemm_dot2(nq, nk, d, q, d, kt.data(), nk, prob.data(), nk);
    }
    static const double kOne = 1.0;
    for (int64_t i = 0; i < nq; ++i) {
      double* prow = prob.data() + i * nk;
      double m = -kInf;
      for (int64_t j = 0; j < nk; ++j) {
        if (causal && j > i) prow[j] = -kInf;
        m = std::max(m, prow[j]);
      }
      // exp(scale*(s - m)) with the difference taken before scaling (exact for close scores).
      for (int64_t j = 0; j < nk; ++j)
        prow[j] = prow[j] == -kInf ? 0.0 : std::exp(scale * (prow[j] - m));
      double lh, ll;
      dot2(prow, 1, &kOne, 0, nk, 0.0, lh, ll);
      const double l = lh + ll;
      for (int64_t j = 0; j < nk; ++j) prow[j] /= l;
      out.lse[p * nq + i] = m * scale + std::log(l);
    }
    gemm_dot2(nq, dv, nk, prob.data(), nk, v, dv, o, dv);
    if (!grad) return;
    const double* dout = inputs.d_out.data() + p * nq * dv;
    std::vector<double> ds(nq * nk);
    {
      const std::vector<double> vt = transposed(v, nk, dv);
      gemm_dot2(nq, nk, dv, dout, dv, vt.data(), nk, ds.data(), nk);  // dP
    }
    for (int64_t i = 0; i < nq; ++i) {
      double hi, lo;
      dot2(dout + i * dv, 1, o + i * dv, 1, dv, 0.0, hi, lo);
      const double delta = hi + lo;
      out.delta[p * nq + i] = delta;
      for (int64_t j = 0; j < nk; ++j) ds[i * nk + j] = prob[i * nk + j] * (ds[i * nk + j] - delta);
    }
    double* dq = out.dq.data() + p * nq * d;
    double* dk = out.dk.data() + p * nk * d;
    gemm_dot2(nq, d, nk, ds.data(), nk, k, d, dq, d);
    for (int64_t x = 0; x < nq * d; ++x) dq[x] *= scale;
    const std::vector<double> dst = transposed(ds.data(), nq, nk);
    gemm_dot2(nk, d, nq, dst.data(), nq, q, d, dk, d);
    for (int64_t x = 0; x < nk * d; ++x) dk[x] *= scale;
    const std::vector<double> pt = transposed(prob.data(), nq, nk);
    gemm_dot2(nk, dv, nq, pt.data(), nq, dout, dv, out.dv.data() + p * nk * dv, dv);
  });
  return out;
}

}  // namespace simprec::attention
