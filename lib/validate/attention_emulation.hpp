// Emulation of attention kernels: the model is a numerics spec (lib/attention/numerics_spec.hpp,
// e.g. "cuda-fa2" or "torch-math,p_cast=bf16:rne") run by lib/attention on the kernel's inputs. The
// kernel describes itself with attributes (all optional):
//   format         the preset's low-precision format F (default: Q's format; must match it)
//   output_format  O's format (forward) or dQ/dK/dV's (backward); must match the tensors
//   block_rows, block_cols   the tiles (default: the preset's)
//   exp2_function, exp_function, log_function, log2_function, rcp_function, div_function
//                  a device-function kernel of the same plugin (x [N] fp32 -> y [N] fp32; div:
//                  x [N] and the divisor d [N]) whose values the emulation takes for that
//                  function (AttentionConfig::device_tables); absent: device_math's, else
//                  correctly rounded
// and understands the call parameters causal (bool), scale (float64; default 1/sqrt(D)),
// beta_rowmax (bool), beta, eps (float64; the mitigation beta-rowmax:BETA:EPS, with its
// defaults and checks), sr_p_bits (int64: 0 off, else the mitigation sr-p-tiled:BITS) and seed.
// Forward: Q, K, V -> O, LSE. Backward: Q, K, V, O, dO, LSE -> dQ, dK, dV, from the given O and
// LSE. Both put reference_attention's exact outputs in call.reference.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/validate/kernel_emulation.hpp"
#include "lib/validate/locate.hpp"
#include "plugins/host/kernel_request.hpp"

namespace simprec::validate {

void emulate_attention_forward(const EmulationCall& call,
                               std::vector<plugins::HostTensor>& outputs);
void emulate_attention_backward(const EmulationCall& call,
                                std::vector<plugins::HostTensor>& outputs);

// Throws std::invalid_argument for a call the emulators refuse: a model that is not an
// attention preset, attributes or parameters that do not fit, a device function the plugin
// (call.plugin, when given) does not offer as a function kernel of fp32 x (and d) and y.
void check_attention_call(const EmulationCall& call,
                          const std::vector<plugins::HostTensor>& outputs);

// The configuration the emulators run: make_preset(model, F), then tiles, output format and
// parameters as above. Throws std::invalid_argument saying what does not fit.
attention::AttentionConfig attention_config(const plugins::KernelInfo& kernel,
                                            const std::string& model,
                                            const std::vector<plugins::NamedValue>& parameters,
                                            const std::string& input_format,
                                            const std::string& output_format);

// `validate --locate` of an attention kernel's call (locate.hpp): on the call's inputs, with the
// model's configuration, the kernel's device exp2 where it names one. Stopped by a time limit
// (Cancelled), it returns what it found until then (LocateReport::stopped).
LocateReport locate_attention_call(const EmulationCall& call,
                                   const std::vector<plugins::HostTensor>& kernel_outputs,
                                   const std::vector<plugins::HostTensor>& emulated_outputs);

// A backward kernel's request gets O and LSE (those not named in `keep`) from the emulated
// forward pass of `model` on its Q, K, V with its parameters, exp2 correctly rounded: inputs
// that belong together, the same for the kernel and the emulation.
void set_forward_inputs(const plugins::KernelInfo& kernel, const std::string& model,
                        const std::set<std::string>& keep, plugins::KernelRequest& request);

}  // namespace simprec::validate
