// The moves of the search, read from the registries: every other strategy of every slot, every
// value of every parameter with fixed choices, kernel-plausible values of the free-form
// parameters that shape a kernel (tiles, key/value splits), and the formats, roundings and
// accumulation models of the sites where kernels plausibly differ. A strategy or tensor-core
// model added to its registry is searched without a change here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/discover/candidate.hpp"

namespace simprec::discover {

struct SpaceOptions {
  bool gradients = false;  // the evidence holds dQ, dK or dV: the backward pass's moves too
};

// The single-item moves from `config` (the candidate's configuration), each one value that
// differs from the current one. Some are refused by the spec checks; the search combines those
// with another move (requirements.hpp) or drops them.
std::vector<Move> single_moves(const attention::AttentionConfig& config,
                               const SpaceOptions& options);

// The keys the search never moves: facts about the call (given per case) and parameters no
// kernel-plausible value of which is known (FP8 scaling, FlashAttention-1's SRAM, quantisation).
bool is_fixed_key(std::string_view key);

// One line per kind of move, for `simprec discover --list-space` and docs/discover.md.
std::string describe_space();

}  // namespace simprec::discover
