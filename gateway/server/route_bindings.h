#pragma once

#include <string>
#include <vector>

#include "gateway/config/config.h"
#include "lockstore/fence/fence_store.h"
#include "lockstore/status.h"

// A route's fence keys name resources: "files:{path}" on backend "files" means one fence per file
// of that backend. Change the template (or the backend) and every resource gets a fresh fence
// with no history, so a zombie holding an old token is admitted again. The store keeps each
// route's binding (template + backend), and a start-up or reload that changes the binding of a
// route whose fences exist is refused unless the operator accepts it for that route
// (docs/OPERATIONS.md "Changing a route's fence keys").
namespace fencegate::gateway {

// What a route's fence keys are made of, as the store keeps it.
std::string RouteBinding(const RouteConfig& route);

// Checks every route of `config` against the bindings the store recorded, then records the
// bindings of `config` (new routes, and changes that were accepted or harmless). A changed
// binding is harmless when the store holds no fence under the old template's key prefix (the
// route admitted no write). Refused (InvalidArgument, nothing recorded): a harmful change of a
// route not named in `accepted_routes`, or a name there that is no route of `config`. Blocking:
// start-up and reload only, never a network thread.
lockstore::Status CheckAndRecordRouteBindings(const Config& config, lockstore::FenceStore& store,
                                              const std::vector<std::string>& accepted_routes);

}  // namespace fencegate::gateway
