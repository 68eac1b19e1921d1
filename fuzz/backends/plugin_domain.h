// A plugin's declared domain (qcheck_plugin_domain, include/qcheck/qcheck_plugin.h):
// which cases it takes, named field by field, and the smallest move of a case
// inside it. The loader (plugin.h) adds the plugin's supports callback.
#pragma once

#include <string>

#include <qcheck/qcheck_plugin.h>
#include "fuzz/case/case.h"

namespace qcheck {

// "" when the case is inside the declared domain, else the first field
// outside it: "FIELD VALUE (the plugin supports ...)".
std::string outside_declared_domain(const qcheck_plugin_domain& domain, const Case& c);

// Moves the case into the declared domain with the smallest changes (each
// field outside it to the nearest value inside); the case may still be
// invalid or refused by the supports callback afterwards.
void fit_to_plugin_domain(const qcheck_plugin_domain& domain, Case& c);

}  // namespace qcheck
