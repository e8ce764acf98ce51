// The experiment reader (lib/experiments/experiment_spec) on arbitrary bytes: it refuses them
// with an exception (a ConfigError naming FILE:LINE:COLUMN) or returns a spec whose cases can
// be expanded and fingerprinted. Generated inputs and preset implementations are checked by
// the real attention backend; inputs from files and plugin implementations are accepted
// unchecked, since checking them would read or load whatever files the input names.
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "fuzz/fuzz_file.hpp"
#include "lib/experiments/attention_backend.hpp"
#include "lib/experiments/experiment_spec.hpp"

namespace {

using namespace simprec::experiments;

class FuzzBackend final : public CaseBackend {
 public:
  void check_input(const InputSpec& input) const override {
    if (!input.generator.empty()) attention_.check_input(input);
  }
  void check_implementation(const ImplementationSpec& impl) const override {
    if (impl.plugin.empty()) attention_.check_implementation(impl);
  }
  nlohmann::json run_case(const nlohmann::json&, unsigned) const override { std::abort(); }

 private:
  AttentionBackend attention_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const simprec::fuzzing::MemoryFile file(data, size);
  const FuzzBackend backend;
  try {
    const ExperimentSpec spec = load_experiment(file.path(), backend);
    spec.fingerprint();
    for (const auto& c : expand_cases(spec, backend)) c.label();
  } catch (const std::exception&) {
    // refused, with a message: what bad input should get
  }
  return 0;
}
