// The check of every option that names a file or folder simprec writes (--out, --save): an
// empty name would write into the current folder, so it is refused when parsed, with the
// value and what was expected, before anything runs.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "lib/limits/output_folder.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::cli {

inline CLI::Validator output_path() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::string problem = limits::output_path_problem(value);
        return problem.empty() ? "" : "'" + limits::excerpt(value) + "' " + problem;
      },
      "PATH");
}

}  // namespace simprec::cli
