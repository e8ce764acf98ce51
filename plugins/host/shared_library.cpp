#include "plugins/host/shared_library.hpp"

#include <dlfcn.h>

#include <cstring>

#include "plugins/host/describe.hpp"
#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {
namespace {

constexpr size_t kErrorBufferBytes = 4096;

std::string status_name(SimprecStatus status) {
  switch (status) {
    case SIMPREC_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case SIMPREC_ERROR_UNSUPPORTED:
      return "unsupported";
    case SIMPREC_ERROR_DEVICE:
      return "device error";
    case SIMPREC_ERROR_INTERNAL:
      return "internal error";
    default:
      return "status " + std::to_string(status);
  }
}

// The plugin's message, never trusting it to have NUL-terminated the buffer.
std::string message_from(std::vector<char>& buffer) {
  buffer.back() = '\0';
  return buffer[0] == '\0' ? "(no message)" : std::string(buffer.data());
}

// A named value in C form; the strings point into the NamedValue, which must outlive it.
SimprecNamedValue c_named_value(const NamedValue& v) {
  SimprecNamedValue c{};
  c.struct_size = SIMPREC_NAMED_VALUE_STRUCT_SIZE;
  c.name = v.name.c_str();
  c.type = static_cast<uint32_t>(type_of(v.value));
  if (const auto* i = std::get_if<int64_t>(&v.value)) c.int64_value = *i;
  if (const auto* d = std::get_if<double>(&v.value)) c.float64_value = *d;
  if (const auto* s = std::get_if<std::string>(&v.value)) c.string_value = s->c_str();
  if (const auto* b = std::get_if<bool>(&v.value)) c.int64_value = *b ? 1 : 0;
  return c;
}

}  // namespace

SharedLibraryPlugin::SharedLibraryPlugin(const std::filesystem::path& path) {
  // RTLD_LOCAL: two plugins may define the same symbols without meeting.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    throw PluginError("plugin " + path.string() +
                      ": cannot be loaded: " + (why ? why : "unknown reason"));
  }
  try {
    dlerror();
    auto entry =
        reinterpret_cast<SimprecEntryFunction>(dlsym(handle_, SIMPREC_PLUGIN_ENTRY_SYMBOL));
    if (!entry) {
      throw PluginError("plugin " + path.string() +
                        ": is not a simprec plugin: it does not export " +
                        SIMPREC_PLUGIN_ENTRY_SYMBOL + "()");
    }
    std::vector<char> error(kErrorBufferBytes, '\0');
    SimprecEntryArgs args{};
    args.struct_size = SIMPREC_ENTRY_ARGS_STRUCT_SIZE;
    args.host_abi_major = SIMPREC_PLUGIN_ABI_MAJOR;
    args.host_abi_minor = SIMPREC_PLUGIN_ABI_MINOR;
    args.error = error.data();
    args.error_size = error.size();
    const SimprecStatus status = entry(&args);
    if (status != SIMPREC_OK) {
      throw PluginError("plugin " + path.string() + ": refused to start for host ABI " +
                        std::to_string(SIMPREC_PLUGIN_ABI_MAJOR) + "." +
                        std::to_string(SIMPREC_PLUGIN_ABI_MINOR) + " (" + status_name(status) +
                        "): " + message_from(error));
    }
    plugin_ = args.plugin;
    info_ = describe_plugin(plugin_, path.string());
  } catch (...) {
    dlclose(handle_);
    throw;
  }
}

SharedLibraryPlugin::~SharedLibraryPlugin() {
  if (plugin_ && plugin_->shutdown) plugin_->shutdown();
  dlclose(handle_);
}

const SimprecKernel* SharedLibraryPlugin::c_kernel(const std::string& name) const {
  for (size_t i = 0; i < plugin_->kernel_count; ++i) {
    if (std::strcmp(plugin_->kernels[i]->name, name.c_str()) == 0) return plugin_->kernels[i];
  }
  info_.kernel(name);  // throws, listing the kernels
  return nullptr;
}

std::vector<HostTensor> SharedLibraryPlugin::run(const KernelRequest& request) {
  std::vector<HostTensor> outputs = prepare_outputs(info_.kernel(request.kernel), request);
  run_into(request, outputs);
  return outputs;
}

void SharedLibraryPlugin::run_into(const KernelRequest& request, std::vector<HostTensor>& outputs) {
  const SimprecKernel* kernel = c_kernel(request.kernel);
  // The plugin may not write to inputs, but the DLTensor data pointer is not const.
  std::vector<HostTensor> inputs = request.inputs;
  std::vector<DLTensor> views;
  std::vector<SimprecTensor> tensors;
  views.reserve(inputs.size() + outputs.size());
  tensors.reserve(inputs.size() + outputs.size());
  for (auto* list : {&inputs, &outputs}) {
    for (auto& t : *list) {
      views.push_back(dl_tensor_view(t));
      tensors.push_back(
          {SIMPREC_TENSOR_STRUCT_SIZE, t.name.c_str(), t.format.c_str(), &views.back()});
    }
  }
  std::vector<const SimprecTensor*> tensor_pointers;
  for (const auto& t : tensors) tensor_pointers.push_back(&t);
  std::vector<SimprecNamedValue> parameters;
  for (const auto& p : request.parameters) parameters.push_back(c_named_value(p));
  std::vector<const SimprecNamedValue*> parameter_pointers;
  for (const auto& p : parameters) parameter_pointers.push_back(&p);

  std::vector<char> error(kErrorBufferBytes, '\0');
  SimprecRunArgs args{};
  args.struct_size = SIMPREC_RUN_ARGS_STRUCT_SIZE;
  args.kernel = kernel;
  args.tensor_count = tensor_pointers.size();
  args.tensors = tensor_pointers.data();
  args.parameter_count = parameter_pointers.size();
  args.parameters = parameter_pointers.data();
  args.error = error.data();
  args.error_size = error.size();
  const SimprecStatus status = kernel->run(&args);
  if (status != SIMPREC_OK) {
    throw PluginError("plugin '" + info_.name + "' kernel '" + request.kernel + "' failed (" +
                      status_name(status) + "): " + message_from(error));
  }
}

}  // namespace simprec::plugins
