// The CPU reference plugin: naive kernels in plain float/double that exercise the whole plugin
// ABI (loading, describing, calling, errors) without a GPU, and whose emulation claims are
// honest: gemm_f32 and gemm_f64 are bit-exact "sequential" accumulations.
#include <cstdio>
#include <iterator>

#include "plugins/cpu_reference/kernels.hpp"
#include "plugins/plugin_kit.hpp"
#include "plugins/simprec_plugin.h"

namespace simprec::cpu_reference {
namespace {

using plugin_kit::describe_kernel;
using plugin_kit::operand;
using plugin_kit::string_value;

template <size_t N, class T>
void set_array(size_t& count, const T* const*& items, const T* const (&array)[N]) {
  count = N;
  items = array;
}

// ---- GEMM: shared operand descriptions ----
const SimprecOperandSpec gemm_a = operand("A", SIMPREC_OPERAND_INPUT, "fp32,bf16,fp16", "M,K");
const SimprecOperandSpec gemm_b = operand("B", SIMPREC_OPERAND_INPUT, "fp32,bf16,fp16", "K,N");
const SimprecOperandSpec gemm_c =
    operand("C", SIMPREC_OPERAND_INPUT, "fp32", "M,N", SIMPREC_OPERAND_FLAG_OPTIONAL);
const SimprecOperandSpec gemm_d = operand("D", SIMPREC_OPERAND_OUTPUT, "fp32", "M,N");
const SimprecOperandSpec* const gemm_f32_operands[] = {&gemm_a, &gemm_b, &gemm_c, &gemm_d};
const SimprecNamedValue fp32_accumulator = string_value("accumulator_format", "fp32");
const SimprecNamedValue* const gemm_f32_attributes[] = {&fp32_accumulator};
// Small enough that the exact emulation of a validate run stays quick.
const SimprecDimensionSpec gemm_limit_m{SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "M", 1, 4096, 1};
const SimprecDimensionSpec gemm_limit_n{SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "N", 1, 4096, 1};
const SimprecDimensionSpec gemm_limit_k{SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "K", 1, 65536, 1};
const SimprecDimensionSpec* const gemm_dimensions[] = {&gemm_limit_m, &gemm_limit_n, &gemm_limit_k};

const SimprecOperandSpec gemm64_a = operand("A", SIMPREC_OPERAND_INPUT, "fp64,fp32", "M,K");
const SimprecOperandSpec gemm64_b = operand("B", SIMPREC_OPERAND_INPUT, "fp64,fp32", "K,N");
const SimprecOperandSpec gemm64_c =
    operand("C", SIMPREC_OPERAND_INPUT, "fp64", "M,N", SIMPREC_OPERAND_FLAG_OPTIONAL);
const SimprecOperandSpec gemm64_d = operand("D", SIMPREC_OPERAND_OUTPUT, "fp64", "M,N");
const SimprecOperandSpec* const gemm_f64_operands[] = {&gemm64_a, &gemm64_b, &gemm64_c, &gemm64_d};
const SimprecNamedValue fp64_accumulator = string_value("accumulator_format", "fp64");
const SimprecNamedValue* const gemm_f64_attributes[] = {&fp64_accumulator};

// ---- attention forward ----
const SimprecOperandSpec attention_q = operand("Q", SIMPREC_OPERAND_INPUT, "fp32", "B,H,Sq,D");
const SimprecOperandSpec attention_k = operand("K", SIMPREC_OPERAND_INPUT, "fp32", "B,H,Sk,D");
const SimprecOperandSpec attention_v = operand("V", SIMPREC_OPERAND_INPUT, "fp32", "B,H,Sk,Dv");
const SimprecOperandSpec attention_o = operand("O", SIMPREC_OPERAND_OUTPUT, "fp32", "B,H,Sq,Dv");
const SimprecOperandSpec attention_lse =
    operand("LSE", SIMPREC_OPERAND_OUTPUT, "fp32", "B,H,Sq", SIMPREC_OPERAND_FLAG_OPTIONAL);
const SimprecOperandSpec* const attention_operands[] = {&attention_q, &attention_k, &attention_v,
                                                        &attention_o, &attention_lse};
const SimprecParameterSpec causal_parameter{SIMPREC_PARAMETER_SPEC_STRUCT_SIZE,
                                            "causal",
                                            SIMPREC_VALUE_BOOL,
                                            0,
                                            "false",
                                            "mask keys after the query (bottom-right aligned)"};
const SimprecParameterSpec scale_parameter{
    SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, "scale", SIMPREC_VALUE_FLOAT64, 0, "1/sqrt(D)",
    "factor applied to Q K^T"};
const SimprecParameterSpec* const attention_parameters[] = {&causal_parameter, &scale_parameter};

// ---- exp2 ----
const SimprecOperandSpec function_x = operand("x", SIMPREC_OPERAND_INPUT, "fp32", "N");
const SimprecOperandSpec function_y = operand("y", SIMPREC_OPERAND_OUTPUT, "fp32", "N");
const SimprecOperandSpec* const function_operands[] = {&function_x, &function_y};
const SimprecNamedValue exp2_function = string_value("function", "exp2");
const SimprecNamedValue* const exp2_attributes[] = {&exp2_function};

SimprecKernel make_gemm_f32() {
  SimprecKernel k = describe_kernel(
      "gemm_f32", SIMPREC_KERNEL_MATMUL, SIMPREC_KERNEL_FLAG_BIT_EXACT,
      "D = A*B + C, fp32 accumulator, one fmaf per term in K order", "sequential", run_gemm_f32);
  set_array(k.operand_count, k.operands, gemm_f32_operands);
  set_array(k.dimension_count, k.dimensions, gemm_dimensions);
  set_array(k.attribute_count, k.attributes, gemm_f32_attributes);
  return k;
}

SimprecKernel make_gemm_f32_unfused() {
  SimprecKernel k =
      describe_kernel("gemm_f32_unfused", SIMPREC_KERNEL_MATMUL, 0,
                      "D = A*B + C, fp32 accumulator, product rounded to fp32 before each add",
                      "sequential", run_gemm_f32_unfused);
  set_array(k.operand_count, k.operands, gemm_f32_operands);
  set_array(k.dimension_count, k.dimensions, gemm_dimensions);
  set_array(k.attribute_count, k.attributes, gemm_f32_attributes);
  return k;
}

SimprecKernel make_gemm_f64() {
  SimprecKernel k = describe_kernel(
      "gemm_f64", SIMPREC_KERNEL_MATMUL, SIMPREC_KERNEL_FLAG_BIT_EXACT,
      "D = A*B + C, fp64 accumulator, one fma per term in K order", "sequential", run_gemm_f64);
  set_array(k.operand_count, k.operands, gemm_f64_operands);
  set_array(k.dimension_count, k.dimensions, gemm_dimensions);
  set_array(k.attribute_count, k.attributes, gemm_f64_attributes);
  return k;
}

SimprecKernel make_attention_forward_f32() {
  SimprecKernel k = describe_kernel("attention_forward_f32", SIMPREC_KERNEL_ATTENTION_FORWARD, 0,
                                    "naive softmax(scale Q K^T) V in float, no tiling", nullptr,
                                    run_attention_forward_f32);
  set_array(k.operand_count, k.operands, attention_operands);
  set_array(k.parameter_count, k.parameters, attention_parameters);
  return k;
}

SimprecKernel make_exp2_f32() {
  SimprecKernel k =
      describe_kernel("exp2_f32", SIMPREC_KERNEL_FUNCTION, 0, "y = exp2f(x) from the C library",
                      "correctly-rounded", run_exp2_f32);
  set_array(k.operand_count, k.operands, function_operands);
  set_array(k.attribute_count, k.attributes, exp2_attributes);
  return k;
}

const SimprecKernel gemm_f32 = make_gemm_f32();
const SimprecKernel gemm_f32_unfused = make_gemm_f32_unfused();
const SimprecKernel gemm_f64 = make_gemm_f64();
const SimprecKernel attention_forward_f32 = make_attention_forward_f32();
const SimprecKernel exp2_f32 = make_exp2_f32();
const SimprecKernel* const all_kernels[] = {&gemm_f32, &gemm_f32_unfused, &gemm_f64,
                                            &attention_forward_f32, &exp2_f32};

const SimprecPlugin plugin = plugin_kit::describe_plugin(
    "cpu_reference", "1.0.0",
    "naive CPU kernels in plain float/double, for tests and as a reference", all_kernels,
    std::size(all_kernels));

}  // namespace
}  // namespace simprec::cpu_reference

SIMPREC_PLUGIN_EXPORT SimprecStatus simprec_plugin_entry(SimprecEntryArgs* args) {
  if (args->host_abi_major != SIMPREC_PLUGIN_ABI_MAJOR) {
    if (args->error && args->error_size > 0)
      std::snprintf(args->error, args->error_size, "cpu_reference speaks ABI 1 only");
    return SIMPREC_ERROR_UNSUPPORTED;
  }
  args->plugin = &simprec::cpu_reference::plugin;
  return SIMPREC_OK;
}
