// FlashAttention-2 in float for the configurations whose every rounding is a native float
// operation or a short double computation rounded once (the fp32 preset): flash attention, every
// site but `input` fp32 round-to-nearest-even, products and sums `sequential`, exp_impl natural,
// and the default structure everywhere else. There a sum or product site is a float addition,
// multiplication or fmaf chain in the site's order; a float times the double softmax scale (the
// exponent argument's score and max, the final dQ and dK) is rounded once from the exact
// product; exp is exp_fp32 (correctly rounded, as the C library's double exp rounded to float is
// for every float argument: tests/elementary_heavy_test.cpp); alpha, 1/l and the LSE are the
// same double expressions as in the engine, once per row. So the values stay floats, the
// products run through float_sequential_strided on tiles laid out for it (S and P transposed, so
// that the per-row work runs across rows in vector lanes), and the results are bit-identical to
// the site-by-site path (tests/attention_float_flash_test.cpp).
// Also the fa2 preset at F = bf16, its products `sequential` or its tensor-core model
// tc:sm90-mma-bf16 (on bf16 values every rounding but the tensor-core model's is a float
// operation or a double rounded once too): the exponent
// argument is fmaf(s, c, -shift), exp2 is exp2_fp32 (correctly rounded, as the site path rounds
// it), P, O and dS are cast to bf16 on the float bits, dQ and dK rounded
// once from the exact acc * scale at grad_out, and with the tensor-core model each tile's product
// goes through tensor_core_gemm.
#pragma once

#include <cstdint>

#include "lib/attention/tensors.hpp"

namespace simprec::attention {

// Whether `config` is one of these configurations (tracing off: a trace records every rounding).
bool float_flash_applies(const AttentionConfig& config);

// Problem p (batch x heads index) of `inputs` (as rounded at `input`) into `out`: the forward
// pass unless the inputs carry O and LSE, then the backward pass when they carry dO. Returns
// false, having written nothing, when a tensor it reads is not all floats (the inputs in a
// format wider than fp32, or a given O that is not): the site-by-site path then runs it.
// `config` must satisfy float_flash_applies.
bool run_float_flash(const AttentionConfig& config, const AttentionInputs& inputs,
                     AttentionOutputs& out, int64_t p);

}  // namespace simprec::attention
