#include "plugins/host/shared_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "plugins/host/describe.hpp"
#include "plugins/host/guarded_buffer.hpp"
#include "plugins/host/plugin_error.hpp"
#include "plugins/host/plugin_text.hpp"

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

// The plugin's message, never trusting it to have NUL-terminated the buffer or to have written
// UTF-8 (bytes that are not are shown as \xNN: the message travels as JSON from a runner).
std::string message_from(std::vector<char>& buffer) {
  buffer.back() = '\0';
  return buffer[0] == '\0' ? "(no message)" : valid_utf8(buffer.data());
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

// dlopen, the entry function and the version it reports; runs on the plugin's thread. Throws
// PluginError (with the library closed again) when the plugin is refused.
struct LoadedLibrary {
  void* handle = nullptr;
  const SimprecPlugin* plugin = nullptr;
};
LoadedLibrary load_plugin(const std::string& path) {
  // RTLD_LOCAL: two plugins may define the same symbols without meeting.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw PluginError("plugin " + path + ": cannot be loaded: " + (why ? why : "unknown reason"));
  }
  try {
    dlerror();
    auto entry = reinterpret_cast<SimprecEntryFunction>(dlsym(handle, SIMPREC_PLUGIN_ENTRY_SYMBOL));
    if (!entry) {
      throw PluginError("plugin " + path + ": is not a simprec plugin: it does not export " +
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
      throw PluginError("plugin " + path + ": refused to start for host ABI " +
                        std::to_string(SIMPREC_PLUGIN_ABI_MAJOR) + "." +
                        std::to_string(SIMPREC_PLUGIN_ABI_MINOR) + " (" + status_name(status) +
                        "): " + message_from(error));
    }
    return {handle, args.plugin};
  } catch (...) {
    dlclose(handle);
    throw;
  }
}

}  // namespace

SharedLibraryPlugin::SharedLibraryPlugin(const std::filesystem::path& path,
                                         std::optional<std::chrono::milliseconds> time_limit)
    : path_(path.string()), thread_(time_limit) {
  // Owned by the task too, in case it is abandoned.
  auto loaded = std::make_shared<LoadedLibrary>();
  thread_.call([loaded, path = path_] { *loaded = load_plugin(path); }, "plugin " + path_,
               "loading");
  handle_ = loaded->handle;
  plugin_ = loaded->plugin;
  try {
    info_ = describe_plugin(plugin_, path_);
  } catch (...) {
    thread_.call([handle = handle_] { dlclose(handle); }, "plugin " + path_, "unloading");
    throw;
  }
}

SharedLibraryPlugin::~SharedLibraryPlugin() {
  try {
    thread_.call(
        [plugin = plugin_, handle = handle_] {
          if (plugin->shutdown) plugin->shutdown();
          dlclose(handle);
        },
        "plugin " + path_, "shutting down");
  } catch (const std::exception&) {
    // Timed out, or an earlier call did: the library stays loaded for the thread still in it.
  }
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
  // Everything the kernel is given lives in `call`, which the task owns as well: should the call
  // be abandoned, the kernel still running on its thread writes into memory nobody frees.
  struct Call {
    std::vector<HostTensor> inputs;  // a copy: the plugin must not write to the host's
    std::vector<std::unique_ptr<GuardedBuffer>> output_buffers;
    std::vector<DLTensor> views;
    std::vector<SimprecTensor> tensors;
    std::vector<const SimprecTensor*> tensor_pointers;
    std::vector<SimprecNamedValue> parameters;
    std::vector<const SimprecNamedValue*> parameter_pointers;
    std::vector<char> error = std::vector<char>(kErrorBufferBytes, '\0');
    SimprecRunArgs args{};
    SimprecStatus status = SIMPREC_OK;
  };
  auto call = std::make_shared<Call>();
  call->inputs = request.inputs;
  const std::string whose = "plugin '" + info_.name + "' kernel '" + request.kernel + "'";
  for (auto& output : outputs) {
    call->output_buffers.push_back(std::make_unique<GuardedBuffer>(
        output.bytes.size(), whose + " wrote past the end of its output '" + output.name + "' (" +
                                 output.format + " " + shape_text(output.shape) + ", " +
                                 std::to_string(output.bytes.size()) + " bytes)"));
  }
  call->views.reserve(call->inputs.size() + outputs.size());
  call->tensors.reserve(call->inputs.size() + outputs.size());
  const auto add_tensor = [&](HostTensor& t, void* data) {
    call->views.push_back(dl_tensor_view(t));
    call->views.back().data = data;
    call->tensors.push_back(
        {SIMPREC_TENSOR_STRUCT_SIZE, t.name.c_str(), t.format.c_str(), &call->views.back()});
  };
  for (auto& t : call->inputs) add_tensor(t, t.bytes.data());
  for (size_t i = 0; i < outputs.size(); ++i)
    add_tensor(outputs[i], call->output_buffers[i]->data().data());
  for (const auto& t : call->tensors) call->tensor_pointers.push_back(&t);
  for (const auto& p : request.parameters) call->parameters.push_back(c_named_value(p));
  for (const auto& p : call->parameters) call->parameter_pointers.push_back(&p);

  SimprecRunArgs& args = call->args;
  args.struct_size = SIMPREC_RUN_ARGS_STRUCT_SIZE;
  args.kernel = kernel;
  args.tensor_count = call->tensor_pointers.size();
  args.tensors = call->tensor_pointers.data();
  args.parameter_count = call->parameter_pointers.size();
  args.parameters = call->parameter_pointers.data();
  args.error = call->error.data();
  args.error_size = call->error.size();
  thread_.call([call] { call->status = call->args.kernel->run(&call->args); }, "plugin " + path_,
               "running kernel '" + request.kernel + "'");
  // An overrun is reported before the status: the kernel's outputs cannot be trusted either way.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (const auto bytes = call->output_buffers[i]->overrun_bytes()) {
      throw PluginError(whose + " wrote past the end of its output '" + outputs[i].name + "' (" +
                        outputs[i].format + " " + shape_text(outputs[i].shape) + ", " +
                        std::to_string(outputs[i].bytes.size()) + " bytes): it changed bytes " +
                        "as far as " + std::to_string(*bytes) + " past the end");
    }
  }
  if (call->status != SIMPREC_OK) {
    throw PluginError(whose + " failed (" + status_name(call->status) +
                      "): " + message_from(call->error));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto data = call->output_buffers[i]->data();
    std::copy(data.begin(), data.end(), outputs[i].bytes.begin());
  }
}

}  // namespace simprec::plugins
