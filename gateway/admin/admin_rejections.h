#pragma once

#include <string_view>

#include <boost/json/object.hpp>

#include "gateway/admin/admin_json.h"
#include "gateway/server/gateway_context.h"
#include "lockstore/fence/fence_record.h"

// GET /admin/rejections (docs/OPERATIONS.md "Admin API"): the refused writes' audit trail,
// filtered and paged backwards by sequence.

namespace fencegate::gateway {

// One refused write as every admin answer shows it (also the console's live events).
boost::json::object RejectionJson(const lockstore::RejectionRecord& record);

// GET /admin/rejections?route=&reason=&fence_key=&principal=&client=&since=&after=&limit=
// -> {"rejections":[...],"next":SEQ|null}, newest first. Blocks on the store: admin thread.
void HandleRejections(const GatewayContext& context, std::string_view query, std::string_view path,
                      AdminResponse* response);

}  // namespace fencegate::gateway
