// A bounded, printable excerpt of text a user gave, for error messages: a message quotes at most
// `max_chars` characters of the input, whatever its size, with control characters and bytes
// outside printable ASCII escaped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace simprec {

// At most `max_chars` characters of `text`, with control characters and bytes outside printable
// ASCII escaped (\n, \xNN) and "..." (and the full length) when cut.
std::string excerpt(std::string_view text, size_t max_chars = 60);

// An error message as a program prints it: whole up to `max_bytes`, else its start and end with
// the size of what was cut between them. The last guard of the rule that a message quotes at
// most an excerpt of the input, for the places that quote a user's text whole.
std::string bounded_message(std::string_view message, size_t max_bytes = 4096);

}  // namespace simprec
