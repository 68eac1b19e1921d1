// Kernels built outside the project, loaded from shared libraries that
// export qcheck_plugin_v1 (include/qcheck/qcheck_plugin.h). A plugin becomes a Backend
// named "plugin:PATH": its launch runs on the device mirror (CUDA memory) or
// on the host tensors themselves (host memory), so it meets the same data
// path, guards and verdict as this project's kernels. The C API's plugin
// functions (capi/plugins.cc) use the same loader for the Python door.
#pragma once

#include <string>

#include <qcheck/qcheck_plugin.h>
#include "fuzz/backends/backend.h"
#include "fuzz/backends/plugin_domain.h"
#include "fuzz/case/case.h"
#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck {

struct LoadedPlugin {
  std::string path;
  const qcheck_plugin* plugin = nullptr;
  Domain domain;                  // its declaration (any case when it declares none)
  std::string name;               // the plugin's, else the path
  std::string profile;            // the profile it implements ("qcheck" when it names none)
  bool on_host = false;           // QCHECK_PLUGIN_MEMORY_HOST
};

// Loads the library at `path` once per process (later calls get the same
// object; it is never unloaded): the entry point, the ABI version, the struct
// sizes, the memory kind and the profile are checked. "" and *out set, else
// one line naming the path and what is wrong.
std::string load_plugin(const std::string& path, const LoadedPlugin** out);

// "" when the case is inside the plugin's domain (the declared domain, then
// its supports callback), else "outside the domain of plugin NAME: ..."
// naming the field, its value and what the plugin supports.
std::string outside_plugin_domain(const LoadedPlugin& plugin, const Case& c);

// The ABI's view of a launch.
qcheck_plugin_args plugin_args(const FusedQArgs& args);

// Calls the plugin's launch: "" when it returned 0, else its message (never
// empty then).
std::string launch_plugin(const LoadedPlugin& plugin, const FusedQArgs& args, void* stream);

// A launch whose pointers the caller made (host memory, or device memory the
// caller holds, as the C API's Python door does): the case inside the
// domain, the args valid, then the plugin's launch on `stream` (NULL for host memory);
// its failure a runtime error "plugin NAME launch: ...". Does not
// synchronize.
Outcome run_plugin(const LoadedPlugin& plugin, const Case& c, const FusedQArgs& args, void* stream);

// The backend "plugin:PATH" over a loaded plugin.
Backend plugin_backend(const LoadedPlugin& plugin);

// The plugin's path, name, profile, memory and domain (domain_json.h's
// form) as one JSON object (the C API's plugin info, for Python).
std::string plugin_info_json(const LoadedPlugin& plugin);

}  // namespace qcheck
