#include "fuzz/backends/plugin.h"

#include <dlfcn.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <vector>

#include "fuzz/buffers/device_mirror.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/domain/domain_json.h"
#include "numerics/profile.h"

namespace qcheck {
namespace {

// True when a struct of `struct_size` bytes holds `member` (a field that an
// older plugin's struct may lack).
#define QCHECK_PLUGIN_HAS(object, member) \
  ((object).struct_size >= offsetof(std::remove_reference_t<decltype(object)>, member) + sizeof((object).member))

std::string describe_plugin_struct(const std::string& path, const qcheck_plugin& p) {
  if (p.abi_version != QCHECK_PLUGIN_ABI_VERSION) {
    return "plugin " + path + ": abi_version " + std::to_string(p.abi_version) + " is not the ABI version " +
           std::to_string(QCHECK_PLUGIN_ABI_VERSION) + " of this qcheck (include/qcheck/qcheck_plugin.h)";
  }
  if (!QCHECK_PLUGIN_HAS(p, launch) || p.launch == nullptr) {
    return "plugin " + path + ": launch is NULL (or struct_size " + std::to_string(p.struct_size) +
           " too small to hold it)";
  }
  if (p.memory != QCHECK_PLUGIN_MEMORY_CUDA && p.memory != QCHECK_PLUGIN_MEMORY_HOST) {
    return "plugin " + path + ": memory " + std::to_string(p.memory) +
           " must be QCHECK_PLUGIN_MEMORY_CUDA (0) or QCHECK_PLUGIN_MEMORY_HOST (1)";
  }
  return "";
}

std::string load_once(const std::string& path, LoadedPlugin* out) {
  // RTLD_LOCAL: the plugin's own symbols (a second CUDA runtime, its C++
  // library) stay its own.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return "plugin " + path + ": cannot load it: " + (why != nullptr ? why : "dlopen failed");
  }
  auto entry = reinterpret_cast<qcheck_plugin_entry_fn>(dlsym(library, QCHECK_PLUGIN_ENTRY_NAME));
  if (entry == nullptr) {
    return "plugin " + path + ": it exports no " QCHECK_PLUGIN_ENTRY_NAME
           " (extern \"C\" const qcheck_plugin* " QCHECK_PLUGIN_ENTRY_NAME "(void))";
  }
  const qcheck_plugin* p = entry();
  if (p == nullptr) return "plugin " + path + ": " QCHECK_PLUGIN_ENTRY_NAME "() returned NULL";
  std::string error = describe_plugin_struct(path, *p);
  if (!error.empty()) return error;
  out->path = path;
  out->plugin = p;
  out->name = QCHECK_PLUGIN_HAS(*p, name) && p->name != nullptr && p->name[0] != 0 ? p->name : path;
  out->profile = QCHECK_PLUGIN_HAS(*p, profile) && p->profile != nullptr && p->profile[0] != 0 ? p->profile
                                                                                               : "qcheck";
  Profile profile;
  if (!find_profile(out->profile, &profile)) {
    return "plugin " + path + ": profile \"" + out->profile + "\" is not a known profile (" +
           "a name of qcheck-replay --list-profiles, or NAME+any-fma)";
  }
  out->on_host = p->memory == QCHECK_PLUGIN_MEMORY_HOST;
  qcheck_plugin_domain declared{};
  declared.struct_size = sizeof(qcheck_plugin_domain);
  if (QCHECK_PLUGIN_HAS(*p, domain) && p->domain != nullptr) p->domain(&declared);
  out->domain = domain_of_plugin(declared);
  return "";
}

// The launch of a valid case with every pointer NULL (the supports callback
// learns the shapes and strides, not the data).
qcheck_plugin_args shape_only_args(const Case& c) {
  const TensorPlan plan = plan_tensors(c);
  const FusedQArgs args = make_fused_q_args(c, plan, std::vector<uint8_t*>(plan.buffers.size(), nullptr));
  qcheck_plugin_args a = plugin_args(args);
  a.positions = nullptr;
  a.mqa_cache.data = a.indexer_cache.data = nullptr;
  a.q_pe.data = a.ql_nope.data = a.index_q.data = a.index_weights.data = nullptr;
  a.query_out.data = a.index_q_fp8.data = a.index_weights_out.data = nullptr;
  return a;
}

// How reports name a plugin's launch.
std::string plugin_launch_name(const LoadedPlugin& plugin) { return "plugin " + plugin.name + " launch"; }

qcheck_plugin_input input_of(const InputView& v) { return {v.data, v.token_stride, v.head_stride}; }
qcheck_plugin_output output_of(const OutputView& v) { return {v.data, v.token_stride, v.head_stride}; }
qcheck_plugin_cache cache_of(const CacheView& v) {
  return {v.data, static_cast<int32_t>(v.dtype), v.rows, v.row_stride};
}

}  // namespace

std::string load_plugin(const std::string& path, const LoadedPlugin** out) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<LoadedPlugin>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = loaded.find(path);
  if (found == loaded.end()) {
    auto plugin = std::make_unique<LoadedPlugin>();
    const std::string error = load_once(path, plugin.get());
    if (!error.empty()) return error;
    found = loaded.emplace(path, std::move(plugin)).first;
  }
  *out = found->second.get();
  return "";
}

qcheck_plugin_args plugin_args(const FusedQArgs& args) {
  qcheck_plugin_args a{};
  a.struct_size = sizeof(qcheck_plugin_args);
  a.num_tokens = args.num_tokens;
  a.mqa_heads = args.mqa_heads;
  a.indexer_heads = args.indexer_heads;
  a.index_dim = args.index_dim;
  a.rope_dim = args.rope_dim;
  a.nope_dim = args.nope_dim;
  a.query_path = static_cast<int32_t>(args.query_path);
  a.has_indexer = args.has_indexer ? 1 : 0;
  a.indexer_rope = static_cast<int32_t>(args.indexer_rope);
  a.ql_nope_aliased = ql_nope_aliases_query_out(args) ? 1 : 0;
  a.positions = args.positions;
  a.mqa_cache = cache_of(args.mqa_cache);
  a.indexer_cache = cache_of(args.indexer_cache);
  a.q_pe = input_of(args.q_pe);
  a.ql_nope = input_of(args.ql_nope);
  a.index_q = input_of(args.index_q);
  a.index_weights = input_of(args.index_weights);
  a.index_weights_dtype = static_cast<int32_t>(args.index_weights_dtype);
  a.query_out = output_of(args.query_out);
  a.index_q_fp8 = output_of(args.index_q_fp8);
  a.index_weights_out = output_of(args.index_weights_out);
  a.index_weights_out_dtype = static_cast<int32_t>(args.index_weights_out_dtype);
  a.q_scale_bits = args.q_scale_bits;
  a.softmax_scale_bits = args.softmax_scale_bits;
  a.head_scale_bits = args.head_scale_bits;
  return a;
}

std::string outside_plugin_domain(const LoadedPlugin& plugin, const Case& c) {
  std::string why = outside_domain(plugin.domain, c);
  if (why.empty() && QCHECK_PLUGIN_HAS(*plugin.plugin, supports) && plugin.plugin->supports != nullptr) {
    const qcheck_plugin_args args = shape_only_args(c);
    char message[512] = {0};
    if (plugin.plugin->supports(&args, message, sizeof message) == 0) {
      message[sizeof message - 1] = 0;
      why = message[0] != 0 ? message : "its supports callback refused the case";
    }
  }
  return why.empty() ? "" : "outside the domain of plugin " + plugin.name + ": " + why;
}

std::string launch_plugin(const LoadedPlugin& plugin, const FusedQArgs& args, void* stream) {
  const qcheck_plugin_args a = plugin_args(args);
  char message[1024] = {0};
  const int status = plugin.plugin->launch(&a, stream, message, sizeof message);
  if (status == 0) return "";
  message[sizeof message - 1] = 0;
  return message[0] != 0 ? std::string(message) : "launch returned " + std::to_string(status) + " with no message";
}

Outcome run_plugin(const LoadedPlugin& plugin, const Case& c, const FusedQArgs& args, void* stream) {
  const std::string outside = outside_plugin_domain(plugin, c);
  if (!outside.empty()) return Outcome::invalid_input(outside);
  const std::string invalid = validate_fused_q_args(args);
  if (!invalid.empty()) return Outcome::invalid_input(invalid);
  const std::string error = launch_plugin(plugin, args, plugin.on_host ? nullptr : stream);
  return error.empty() ? Outcome::ok() : Outcome::runtime_error(plugin_launch_name(plugin) + ": " + error);
}

Backend plugin_backend(const LoadedPlugin& plugin) {
  Backend b;
  b.name = "plugin:" + plugin.path;
  b.description = "plugin " + plugin.name + " (" + (plugin.on_host ? "host" : "CUDA") + " memory, profile " +
                  plugin.profile + ")";
  b.fixed_profile = plugin.profile;
  const LoadedPlugin* p = &plugin;
  const std::string what = plugin_launch_name(plugin);
  if (plugin.on_host) {
    b.domain = [](const Case&) { return std::string(); };
    b.run = [p](const Case& c, const Profile&, TensorSet& tensors) {
      return run_plugin(*p, c, make_fused_q_args(c, tensors), nullptr);
    };
  } else {
    b.domain = [](const Case&) { return cuda_device_problem(); };
    b.can_race = true;
    const DeviceLaunch launch = [p](const FusedQArgs& args, void* stream) { return launch_plugin(*p, args, stream); };
    for (LaunchMode mode : {LaunchMode::kEager, LaunchMode::kGraph}) {
      auto run = [p, what, launch, mode](const Case& c, const Profile&, TensorSet& tensors) {
        const std::string outside = outside_plugin_domain(*p, c);
        if (!outside.empty()) return Outcome::invalid_input(outside);
        return run_on_cuda_device(what, launch, c, tensors, mode);
      };
      (mode == LaunchMode::kEager ? b.run : b.run_in_graph) = run;
    }
  }
  b.fit = [p](Case& c) { fit_to_domain(p->domain, c); };
  b.outside = [p](const Case& c) { return outside_plugin_domain(*p, c); };
  return b;
}

std::string plugin_info_json(const LoadedPlugin& plugin) {
  nlohmann::ordered_json j;
  j["path"] = plugin.path;
  j["name"] = plugin.name;
  j["profile"] = plugin.profile;
  j["memory"] = plugin.on_host ? "host" : "cuda";
  j["domain"] = nlohmann::ordered_json::parse(domain_to_json(plugin.domain));
  return j.dump();
}

}  // namespace qcheck
