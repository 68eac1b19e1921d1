// A plugin's declared domain (qcheck_plugin_domain, include/qcheck/qcheck_plugin.h)
// read into the domain model every tool asks (fuzz/domain/domain.h). The
// loader (plugin.h) adds the plugin's supports callback.
#pragma once

#include <qcheck/qcheck_plugin.h>
#include "fuzz/domain/domain.h"

namespace qcheck {

// The same cases as the C declaration: a mask, list or limit of 0 is "any".
Domain domain_of_plugin(const qcheck_plugin_domain& declared);

}  // namespace qcheck
