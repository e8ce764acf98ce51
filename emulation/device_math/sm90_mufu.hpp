// The H100's approximate exp2 and log2 (the multifunction unit's ex2.approx.ftz.f32 and
// lg2.approx.ftz.f32), reproduced bit for bit from tables measured on the device.
//
// ex2.approx.ftz.f32, as measured exhaustively over every fp32 x in (-127, 128)
// (kernels/mufu_probe.cu, docs/findings.md "The GPU's exp2 and log2"):
//   ex2(x) = ex2(f) * 2^n,  n = trunc(x) (toward zero), f = x - n in (-1, 1);
//   ex2(f) = ex2(q),        q = f truncated toward zero to a multiple of 2^-23;
// results below 2^-126 flush to +0. Two tables hold ex2(q) for the 2^23 q in [-1, 0) and the
// 2^23 q in [0, 1): every fp32 x is reproduced.
//
// lg2.approx.ftz.f32: for x in [1, 2) the table itself (lg2 of each of the 2^23 mantissas);
// for x >= 2, lg2(x) = e + lg2(1.m) rounded toward zero to fp32 (every normal x >= 2 checked).
// Below 1 that rule misses up to 73% of the values per binade, so no value is given there.
#pragma once

#include <optional>

namespace simprec::device_math {

// ex2.approx.ftz.f32 of x on the H100, every fp32 x (NaN gives NaN).
float sm90_ex2_approx_ftz(float x);

// rcp.approx.ftz.f32 of y on the H100: rcp(1.m * 2^e) = rcp(1.m) * 2^-e with results below
// 2^-126 flushed (0 mismatches over every normal y of both signs), rcp(1.m) from the measured
// table. Subnormal y (flushed to zero) give the infinity of y's sign.
float sm90_rcp_approx_ftz(float y);

// div.full.f32 x / y on the H100 (what Triton emits for a float32 division and for 1.0 / x): a
// divisor above 2^126 in magnitude is scaled by 1/4 and a subnormal one by 2^24, x with it, then
// x * rcp.approx(y) rounded to nearest even. Measured equal on 2^30 random pairs with |x|, |y| in
// [2^-20, 2^20), and on an H200 on 2^24 pairs of any bits or exponents in [-30, 33] and for
// 1.0 / x on every 4th block of 2^16 fp32 x (tests/data/device_math/h200_function_digests.txt).
float sm90_div_full(float x, float y);

// div.approx.ftz.f32 x / y, what nvcc emits for a float32 division and __fdividef under
// --use_fast_math: x (subnormal flushed to zero) times rcp.approx.ftz(y), rounded to nearest
// even, a subnormal product flushed (so 0 for |y| > 2^126, where the reciprocal flushes, as the
// PTX ISA says). Measured equal on an H200 on the same 2^24 pairs.
float sm90_div_approx_ftz(float x, float y);

// ex2.approx.f32, the form without .ftz (CUDA's exp2f without --use_fast_math, Triton's tl.exp):
// equal to ex2.approx.ftz.f32 where the result is normal, x >= -126 (measured on an H200 over
// every such x: CUDA's exp2f without --use_fast_math); its subnormal results are not modelled
// (nullopt below -126: neither rounding ex2(f) * 2^n to nearest nor toward zero matches them).
std::optional<float> sm90_ex2_approx(float x);

// lg2.approx.ftz.f32 of x on the H100: the tables' rule for x >= 1, -inf for +-0 and subnormals,
// NaN for negative x and NaN (equal to the H200 over every such fp32 x); nullopt for normal x in
// (0, 1), where the rule misses.
std::optional<float> sm90_lg2_approx_ftz(float x);

// CUDA's fast-math __expf and __logf as they compile for sm_90: ex2.approx.ftz(x * log2(e)_f32)
// and lg2.approx.ftz(x) * ln(2)_f32, each product rounded to nearest even in fp32. __expf has a
// value for every x; __logf none where lg2.approx has none (x < 1).
float sm90_fast_expf(float x);
std::optional<float> sm90_fast_logf(float x);

// Triton's tl.exp of a float32 on sm_90 (Triton 3.6): ex2.approx.f32 (no .ftz) of
// fp32(x * log2(e)_f32); nullopt where that product is below -126 (a subnormal result).
std::optional<float> sm90_triton_expf(float x);

}  // namespace simprec::device_math
