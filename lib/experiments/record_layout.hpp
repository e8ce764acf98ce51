// Whether a parsed record has the layout docs/experiments.md describes, as far as `run` and
// `report` read it: every member they use has the type they use it as. A record that does not
// is treated like a damaged line (reported, set aside, its case run again) instead of stopping
// every later run and report with a JSON library's type error.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace simprec::experiments {

// Empty when the record can be used; otherwise the first problem, naming the member and what
// was expected ("params.implementation.causal is a string, expected true or false").
std::string record_layout_problem(const nlohmann::json& record);

}  // namespace simprec::experiments
