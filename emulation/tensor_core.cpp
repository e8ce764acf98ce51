#include "emulation/tensor_core.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "emulation/arithmetic.hpp"
#include "emulation/round.hpp"
#include "emulation/unrounded.hpp"

namespace simprec {
namespace {

// An operand split into what the block FMA needs: value = sig * 2^lsb; `exp` is the exponent of
// the leading bit position of the format's significand (emin for subnormals).
struct Operand {
  enum Kind : uint8_t { kZero, kFinite, kInfinity, kNan } kind = kZero;
  bool negative = false;
  int exp = 0;
  int lsb = 0;
  uint64_t sig = 0;
};

Operand decode_operand(const Format& f, uint32_t bits) {
  Operand o;
  o.negative = (bits & f.sign_mask()) != 0;
  if (f.is_nan_bits(bits)) {
    o.kind = Operand::kNan;
    return o;
  }
  if (f.is_infinity_bits(bits)) {
    o.kind = Operand::kInfinity;
    return o;
  }
  const uint64_t mag = bits & f.magnitude_mask();
  const auto field = static_cast<int>(mag >> f.mantissa_bits);
  const uint64_t fraction = mag & f.mantissa_mask();
  if (field == 0) {
    if (fraction == 0 || !f.keeps_subnormals()) return o;  // zero
    o.kind = Operand::kFinite;
    o.exp = f.emin();
    o.lsb = f.emin() - f.mantissa_bits;
    o.sig = fraction;
    return o;
  }
  o.kind = Operand::kFinite;
  o.exp = field - f.bias;
  o.lsb = o.exp - f.mantissa_bits;
  o.sig = fraction | (uint64_t{1} << f.mantissa_bits);
  return o;
}

uint32_t canonical_nan(const Format& acc) {
  // NVIDIA tensor cores return the canonical NaN with all fraction bits set.
  return static_cast<uint32_t>(acc.infinity_bits() | acc.mantissa_mask());
}

// One block: c + sum of count products, each product a[i] * b[i].
uint32_t block_fma(const TensorCoreModel& model, const Operand* a, const Operand* b, int count,
                   uint32_t c_bits) {
  const Format& acc = model.accumulator;
  const Operand c = decode_operand(acc, c_bits);
  bool nan = c.kind == Operand::kNan;
  bool plus_inf = c.kind == Operand::kInfinity && !c.negative;
  bool minus_inf = c.kind == Operand::kInfinity && c.negative;
  for (int i = 0; i < count; ++i) {
    if (a[i].kind == Operand::kNan || b[i].kind == Operand::kNan) nan = true;
    if (a[i].kind == Operand::kInfinity || b[i].kind == Operand::kInfinity) {
      if (a[i].kind == Operand::kZero || b[i].kind == Operand::kZero) {
        nan = true;
      } else {
        (a[i].negative != b[i].negative ? minus_inf : plus_inf) = true;
      }
    }
  }
  if (nan || (plus_inf && minus_inf)) return canonical_nan(acc);
  if (plus_inf || minus_inf)
    return static_cast<uint32_t>(acc.infinity_bits() | (minus_inf ? acc.sign_mask() : 0));

  // The alignment exponent: the largest over the nonzero terms.
  int emax = INT_MIN;
  for (int i = 0; i < count; ++i) {
    if (a[i].kind != Operand::kFinite || b[i].kind != Operand::kFinite) continue;
    const int e =
        model.alignment == AlignmentExponent::kOperandSum
            ? a[i].exp + b[i].exp
            : a[i].lsb + b[i].lsb + highest_bit(static_cast<uint128>(a[i].sig * b[i].sig));
    emax = std::max(emax, e);
  }
  if (c.kind == Operand::kFinite) {
    const int e =
        model.alignment == AlignmentExponent::kOperandSum ? c.exp : c.lsb + highest_bit(c.sig);
    emax = std::max(emax, e);
  }
  if (emax == INT_MIN) {
    // Only zeros: -0 when every term is -0 (IEEE 754's rule for exact zero sums), unless the
    // hardware gives +0 for every zero.
    if (model.zero_is_always_positive) return 0u;
    bool all_negative = c.negative;
    for (int i = 0; i < count; ++i) all_negative &= a[i].negative != b[i].negative;
    return all_negative ? static_cast<uint32_t>(acc.sign_mask()) : 0u;
  }
  const int unit = emax - model.kept_fraction_bits;  // exponent of the window's last bit
  __int128 sum = 0;
  auto add_term = [&](bool negative, uint64_t sig, int lsb) {
    const int shift = lsb - unit;
    uint64_t q;
    bool dropped = false;
    if (shift >= 0) {
      q = sig << shift;
    } else if (-shift >= 64) {
      q = 0;
      dropped = sig != 0;
    } else {
      q = sig >> -shift;
      dropped = (sig & ((uint64_t{1} << -shift) - 1)) != 0;
    }
    if (negative && dropped && model.truncation == TermTruncation::kDown) ++q;
    sum += negative ? -static_cast<__int128>(q) : static_cast<__int128>(q);
  };
  for (int i = 0; i < count; ++i) {
    if (a[i].kind != Operand::kFinite || b[i].kind != Operand::kFinite) continue;
    add_term(a[i].negative != b[i].negative, a[i].sig * b[i].sig, a[i].lsb + b[i].lsb);
  }
  if (c.kind == Operand::kFinite) add_term(c.negative, c.sig, c.lsb);
  if (sum == 0) return 0u;  // exact cancellation gives +0

  const bool negative = sum < 0;
  const auto magnitude = static_cast<uint128>(negative ? -sum : sum);
  // A sum of 2^(emax+1) or more is infinite although the rounding is toward zero: the hardware
  // normalises and finds an exponent it cannot encode (measured on the H100).
  if (unit + highest_bit(magnitude) > acc.emax()) {
    return static_cast<uint32_t>(acc.infinity_bits() | (negative ? acc.sign_mask() : 0));
  }
  const Unrounded exact = Unrounded::finite(negative, unit, magnitude);
  const Rounding rounding{model.block_rounding};
  uint32_t bits;
  if (model.block_result_precision >= acc.precision()) {
    bits = static_cast<uint32_t>(round_to_format(acc, exact, rounding));
  } else {
    // A block result narrower than the accumulator: round to the narrow significand, then widen.
    Format narrow = acc;
    narrow.mantissa_bits = model.block_result_precision - 1;
    const uint64_t narrow_bits = round_to_format(narrow, exact, rounding);
    bits = static_cast<uint32_t>(round_to_format(acc, unpack(narrow, narrow_bits), rounding));
  }
  // A nonzero sum that rounds to zero gives +0 (measured: wgmma with fp16 accumulators).
  return bits == acc.sign_mask() ? 0u : bits;
}

// An operand of `from` re-expressed in `to` (exact: `to` holds every value of `from`).
Operand widen_operand(const Operand& o, const Format& to) {
  if (o.kind != Operand::kFinite) return o;
  Operand w = o;
  const int top = o.lsb + highest_bit(o.sig);  // exponent of the leading one
  if (top >= to.emin()) {
    w.exp = top;
    w.sig = o.sig << (to.mantissa_bits - (top - o.lsb));
    w.lsb = top - to.mantissa_bits;
  } else {
    w.exp = to.emin();
  }
  return w;
}

// x + y rounded to nearest even in the accumulator format, IEEE 754 special cases included.
uint32_t ieee_add(const Format& acc, uint32_t x, uint32_t y) {
  const Unrounded ux = unpack(acc, x), uy = unpack(acc, y);
  if (ux.kind == Unrounded::Kind::kNan || uy.kind == Unrounded::Kind::kNan)
    return canonical_nan(acc);
  if (ux.kind == Unrounded::Kind::kInfinity || uy.kind == Unrounded::Kind::kInfinity) {
    if (ux.kind == Unrounded::Kind::kInfinity && uy.kind == Unrounded::Kind::kInfinity &&
        ux.negative != uy.negative) {
      return canonical_nan(acc);
    }
    const bool negative = ux.kind == Unrounded::Kind::kInfinity ? ux.negative : uy.negative;
    return static_cast<uint32_t>(acc.infinity_bits() | (negative ? acc.sign_mask() : 0));
  }
  return static_cast<uint32_t>(
      round_to_format(acc, exact_add(ux, uy, RoundingMode::kNearestEven), Rounding{}));
}

}  // namespace

uint32_t tensor_core_dot(const TensorCoreModel& model, const uint16_t* a, std::ptrdiff_t a_stride,
                         const uint16_t* b, std::ptrdiff_t b_stride, int length, uint32_t c) {
  const int kk = model.k;
  const int bs = model.block_size;
  const int blocks = model.blocks_per_instruction();
  std::vector<Operand> da(kk), db(kk), ba(bs), bb(bs);
  for (int first = 0; first < length || first == 0; first += kk) {
    for (int i = 0; i < kk; ++i) {
      const bool inside = first + i < length;
      da[i] = inside ? decode_operand(model.input_a, a[(first + i) * a_stride]) : Operand{};
      db[i] = inside ? decode_operand(model.input_b, b[(first + i) * b_stride]) : Operand{};
      if (model.datapath_input) {
        da[i] = widen_operand(da[i], *model.datapath_input);
        db[i] = widen_operand(db[i], *model.datapath_input);
      }
    }
    const bool separate_c = model.c_entry == CEntry::kSeparateAddition;
    uint32_t acc = separate_c ? 0u : c;
    for (int blk = 0; blk < blocks; ++blk) {
      for (int j = 0; j < bs; ++j) {
        int idx;
        if (model.grouping == KGrouping::kContiguous) {
          idx = blk * bs + j;
        } else {
          // pair p = j / 2 of this block is pair blk + p * blocks of the instruction
          idx = 2 * (blk + (j / 2) * blocks) + (j % 2);
        }
        ba[j] = da[idx];
        bb[j] = db[idx];
      }
      acc = block_fma(model, ba.data(), bb.data(), bs, acc);
    }
    c = separate_c ? ieee_add(model.accumulator, acc, c) : acc;
    if (length == 0) break;
  }
  return c;
}

namespace {

uint32_t exact_encoding(const Format& format, double x, const char* what,
                        const std::string& model) {
  const auto bits =
      static_cast<uint32_t>(round_to_format(format, unrounded_from_double(x), Rounding{}));
  const double back = decode(format, bits);
  // A NaN is any NaN: its sign and payload are not the value's.
  const bool exact = x != x ? back != back : back == x && std::signbit(back) == std::signbit(x);
  if (!exact) {
    char value[64];
    std::snprintf(value, sizeof value, "%.17g", x);
    throw std::invalid_argument(std::string(model) + ": " + what + " value " + value +
                                " is not exactly representable in " + format.name());
  }
  return bits;
}

class TensorCoreAccumulation final : public Accumulation {
 public:
  explicit TensorCoreAccumulation(const TensorCoreModel& model) : model_(model) {}
  std::string name() const override { return model_.name; }
  double dot(std::span<const double> a, std::span<const double> b, double c,
             RoundingContext& ctx) const override {
    if (a.size() != b.size()) {
      throw std::invalid_argument(model_.name + ": operands have " + std::to_string(a.size()) +
                                  " and " + std::to_string(b.size()) + " elements");
    }
    std::vector<uint16_t> ab(a.size()), bb(b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ab[i] = static_cast<uint16_t>(exact_encoding(model_.input_a, a[i], "A", model_.name));
      bb[i] = static_cast<uint16_t>(exact_encoding(model_.input_b, b[i], "B", model_.name));
    }
    const uint32_t cb = exact_encoding(model_.accumulator, c, "C", model_.name);
    const uint32_t d =
        tensor_core_dot(model_, ab.data(), 1, bb.data(), 1, static_cast<int>(a.size()), cb);
    const double value = decode(model_.accumulator, d);
    return ctx.format() == model_.accumulator ? value : ctx.round_value(value);
  }

 private:
  const TensorCoreModel& model_;  // presets live as long as the program
};

}  // namespace

std::unique_ptr<Accumulation> make_tensor_core_accumulation(const TensorCoreModel& model) {
  return std::make_unique<TensorCoreAccumulation>(model);
}

std::vector<std::pair<std::string, std::function<std::unique_ptr<Accumulation>()>>>
tensor_core_accumulations() {
  std::vector<std::pair<std::string, std::function<std::unique_ptr<Accumulation>()>>> v;
  for (const TensorCoreModel& m : tensor_core_models()) {
    v.emplace_back(m.name, [&m] { return make_tensor_core_accumulation(m); });
  }
  return v;
}

void register_tensor_core_models() {
  for (auto& [name, make] : tensor_core_accumulations())
    register_accumulation(name, std::move(make));
}

}  // namespace simprec
