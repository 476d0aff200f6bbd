#include "gateway/observability/build_info.h"

#include <prometheus/gauge.h>
#include <boost/version.hpp>

namespace fencegate::gateway {

void RegisterBuildInfo(prometheus::Registry& registry, const std::string& version) {
  std::string compiler;
#if defined(__clang__)
  compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  compiler = "gcc " __VERSION__;
#endif
  prometheus::BuildGauge()
      .Name("fencegate_build_info")
      .Help("Always 1; the labels say which fencegate build is running.")
      .Register(registry)
      .Add({{"version", version},
            {"compiler", compiler},
            {"boost", std::to_string(BOOST_VERSION / 100000) + "." +
                          std::to_string(BOOST_VERSION / 100 % 1000) + "." +
                          std::to_string(BOOST_VERSION % 100)}})
      .Set(1);
}

}  // namespace fencegate::gateway
