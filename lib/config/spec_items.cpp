#include "lib/config/spec_items.hpp"

#include <map>
#include <stdexcept>

#include "emulation/excerpt.hpp"

namespace simprec::config {

void read_spec_items(std::string_view text, std::string_view what, std::string_view grammar,
                     const std::function<std::string(std::string_view)>& key_of,
                     const std::function<void(std::string_view)>& first,
                     const std::function<void(std::string_view)>& item) {
  const std::string quoted = std::string(what) + " '" + excerpt(text) + "'";
  std::map<std::string, std::string> seen;
  size_t start = 0;
  bool at_first = true;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view part = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (part.empty()) {
      throw std::invalid_argument(quoted + ": empty item (expected " + std::string(grammar) + ")");
    }
    if (at_first) {
      first(part);
      at_first = false;
    } else {
      const std::string key = key_of(part);
      const auto [at, fresh] = seen.emplace(key, std::string(part));
      if (!fresh) {
        throw std::invalid_argument(quoted + ": " + excerpt(key) + " is given twice ('" +
                                    excerpt(at->second) + "' and '" + excerpt(part) +
                                    "'); give it once");
      }
      item(part);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

}  // namespace simprec::config
