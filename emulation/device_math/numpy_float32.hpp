// numpy's own float32 exp and log (np.exp, np.log on float32 arrays and scalars): not the C
// library's, but numpy's SIMD kernels (numpy/_core/src/umath/loops_exponent_log.dispatch.c.src,
// the same algorithm from numpy 1.20 to 2.x), chosen at run time on x86-64 CPUs with AVX2 and
// FMA3 or with AVX512F. Both paths perform the same fp32 operations lane by lane, so one scalar
// sequence of the same operations reproduces either:
//
//   exp(x):  q = rint(fp32(x log2e)) (by adding and subtracting 1.5 * 2^23); r = fma(q, -ln2_hi,
//            x), r = fma(q, -ln2_lo, r); a degree-5 over degree-2 rational function of r by
//            fused multiply-adds and one division; times 2^q, rounded once (subnormal results
//            included); +inf from 88.72283935546875, +0 up to -103.97208404541015625.
//   log(x):  x = 2^e * m with m in (sqrt(1/2), sqrt(2)]; f = m - 1; a degree-5 over degree-5
//            rational function of f; fma(e, fp32(ln 2), p/q).
//
// Equal to numpy 2.5.2's np.exp and np.log (AVX-512) on every 4th block of 2^16 float32 arguments
// (tests/data/device_math/h200_function_digests.txt). numpy 1.24.2's AVX2 np.log is equal on those
// blocks too, its AVX2 np.exp not quite: it differs on 84 of the float32 x with a finite result
// (x = 0x3f851592, 0x42b0c0a6, ...), which is not modelled.
// (tests/data/device_math/h200_function_digests.txt). Where the CPU has neither (or numpy was built
// without them) np.exp and np.log are the C library's expf and logf. np.exp2 and np.log2 on float32
// are the C library's exp2f and log2f except on AVX512_SKX CPUs with a numpy linked to SVML (PyPI's
// wheels), where they are Intel's SVML, which is not reproduced here. NaN results are numpy's:
// +NaN, and -NaN for the log of a negative number.
#pragma once

namespace simprec::device_math {

float numpy_expf(float x);
float numpy_logf(float x);

}  // namespace simprec::device_math
