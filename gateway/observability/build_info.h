#pragma once

#include <string>

#include <prometheus/registry.h>

namespace fencegate::gateway {

// fencegate_build_info{version,compiler,boost} 1: what is running, for dashboards to show and
// to join other series with (`* on(instance) group_left(version) fencegate_build_info`).
void RegisterBuildInfo(prometheus::Registry& registry, const std::string& version);

}  // namespace fencegate::gateway
