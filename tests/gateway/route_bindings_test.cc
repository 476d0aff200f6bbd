#include "gateway/server/route_bindings.h"

#include <future>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockstore/fence/memory_fence_store.h"

namespace fencegate::gateway {
namespace {

using lockstore::MemoryFenceStore;
using lockstore::Status;

RouteConfig Route(const std::string& name, const std::string& backend,
                  const std::string& fence_key) {
  RouteConfig route;
  route.name = name;
  route.prefix = "/" + name + "/";
  route.backend = backend;
  EXPECT_TRUE(lockstore::FenceKeyTemplate::Parse(fence_key, &route.fence_key).ok());
  return route;
}

Config WithRoutes(std::vector<RouteConfig> routes) {
  Config config;
  config.routes = std::move(routes);
  return config;
}

void Advance(MemoryFenceStore& store, const std::string& key) {
  std::promise<Status> done;
  store.Advance(key, 7, 1, [&](Status s, lockstore::FenceRecord) { done.set_value(s); });
  ASSERT_TRUE(done.get_future().get().ok());
}

std::map<std::string, std::string> Recorded(MemoryFenceStore& store) {
  std::map<std::string, std::string> bindings;
  EXPECT_TRUE(store.ReadRouteBindings(&bindings).ok());
  return bindings;
}

TEST(RouteBindingsTest, FirstStartRecordsEveryRoute) {
  MemoryFenceStore store;
  const Config config =
      WithRoutes({Route("files", "disk", "files:{path}"), Route("api", "svc", "api:{segment:2}")});
  ASSERT_TRUE(CheckAndRecordRouteBindings(config, store, {}).ok());
  EXPECT_EQ(Recorded(store),
            (std::map<std::string, std::string>{{"api", RouteBinding(config.routes[1])},
                                                {"files", RouteBinding(config.routes[0])}}));
  // The same config again: nothing to refuse.
  EXPECT_TRUE(CheckAndRecordRouteBindings(config, store, {}).ok());
}

TEST(RouteBindingsTest, ChangedTemplateOfARouteWithFencesIsRefusedNamingIt) {
  MemoryFenceStore store;
  ASSERT_TRUE(
      CheckAndRecordRouteBindings(WithRoutes({Route("files", "disk", "files:{path}")}), store, {})
          .ok());
  Advance(store, "files:/report.csv");
  const Config changed = WithRoutes({Route("files", "disk", "docs:{path}")});
  const Status refused = CheckAndRecordRouteBindings(changed, store, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("route \"files\""), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("files:{path}"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("--accept-fence-key-change"), std::string::npos);
  // Nothing recorded: the next start sees the old binding still.
  EXPECT_EQ(Recorded(store).at("files"), "fence_key=files:{path}\nbackend=disk");

  // Accepted for that route: recorded, and from then on the new binding is the known one.
  ASSERT_TRUE(CheckAndRecordRouteBindings(changed, store, {"files"}).ok());
  EXPECT_EQ(Recorded(store).at("files"), RouteBinding(changed.routes[0]));
  EXPECT_TRUE(CheckAndRecordRouteBindings(changed, store, {}).ok());
}

TEST(RouteBindingsTest, ChangedBackendIsAChangeToo) {
  MemoryFenceStore store;
  ASSERT_TRUE(
      CheckAndRecordRouteBindings(WithRoutes({Route("files", "disk", "files:{path}")}), store, {})
          .ok());
  Advance(store, "files:/a");
  const Status refused = CheckAndRecordRouteBindings(
      WithRoutes({Route("files", "other-disk", "files:{path}")}), store, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("other-disk"), std::string::npos) << refused.message();
}

TEST(RouteBindingsTest, ChangeOfARouteThatAdmittedNoWriteIsRecorded) {
  MemoryFenceStore store;
  ASSERT_TRUE(CheckAndRecordRouteBindings(WithRoutes({Route("files", "disk", "files:{path}"),
                                                      Route("api", "svc", "api:{path}")}),
                                          store, {})
                  .ok());
  Advance(store, "api:/orders/1");  // another route's fence: files: has none
  const Config changed =
      WithRoutes({Route("files", "disk", "docs:{path}"), Route("api", "svc", "api:{path}")});
  ASSERT_TRUE(CheckAndRecordRouteBindings(changed, store, {}).ok());
  EXPECT_EQ(Recorded(store).at("files"), RouteBinding(changed.routes[0]));
}

TEST(RouteBindingsTest, TemplateStartingWithAPlaceholderCountsEveryFence) {
  MemoryFenceStore store;
  ASSERT_TRUE(
      CheckAndRecordRouteBindings(WithRoutes({Route("any", "svc", "{host}{path}")}), store, {})
          .ok());
  Advance(store, "example.com/x");
  EXPECT_FALSE(
      CheckAndRecordRouteBindings(WithRoutes({Route("any", "svc", "{path}")}), store, {}).ok());
}

TEST(RouteBindingsTest, RemovedRouteKeepsItsBindingForWhenItComesBack) {
  MemoryFenceStore store;
  ASSERT_TRUE(
      CheckAndRecordRouteBindings(WithRoutes({Route("files", "disk", "files:{path}")}), store, {})
          .ok());
  Advance(store, "files:/a");
  ASSERT_TRUE(
      CheckAndRecordRouteBindings(WithRoutes({Route("api", "svc", "api:{path}")}), store, {}).ok());
  EXPECT_FALSE(
      CheckAndRecordRouteBindings(WithRoutes({Route("files", "disk", "f2:{path}")}), store, {})
          .ok());
}

TEST(RouteBindingsTest, AcceptingAnUnknownRouteIsAnError) {
  MemoryFenceStore store;
  const Status refused = CheckAndRecordRouteBindings(
      WithRoutes({Route("files", "disk", "files:{path}")}), store, {"fils"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("\"fils\""), std::string::npos);
  EXPECT_TRUE(Recorded(store).empty());
}

}  // namespace
}  // namespace fencegate::gateway
