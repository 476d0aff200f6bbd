#include "gateway/admin/admin_events.h"

#include <charconv>

#include <boost/json.hpp>

#include "gateway/admin/admin_rejections.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

constexpr std::string_view kEventStreamType = "text/event-stream";

json::object EventLockGrantJson(const LockGrantEvent& grant) {
  return {{"lock", grant.lock},
          {"owner_id", grant.owner_id},
          {"fencing_token", grant.fencing_token},
          {"at", Rfc3339OrNull(grant.at_ms)}};
}

}  // namespace

void SetEventStreamHeader(AdminResponse* response) {
  response->result(http::status::ok);
  response->set(http::field::content_type, kEventStreamType);
  response->set(http::field::cache_control, "no-store");
  response->set("X-Content-Type-Options", "nosniff");
  // nginx in front of the admin listener would otherwise buffer the stream.
  response->set("X-Accel-Buffering", "no");
}

bool IsEventStreamResponse(const AdminResponse& response) {
  return response.result() == http::status::ok &&
         response[http::field::content_type] == kEventStreamType;
}

std::uint64_t EventStreamStart(std::string_view last_event_id, const EventHub& hub) {
  const std::uint64_t newest = hub.LastId();
  std::uint64_t id = 0;
  const auto parsed =
      std::from_chars(last_event_id.data(), last_event_id.data() + last_event_id.size(), id);
  if (last_event_id.empty() || parsed.ec != std::errc() ||
      parsed.ptr != last_event_id.data() + last_event_id.size() || id > newest) {
    // None, unreadable, or from before a restart (ids start again at 1): from now on.
    return newest;
  }
  return id;
}

std::string EventData(const HubEvent& event) {
  if (const auto* rejection = std::get_if<lockstore::RejectionRecord>(&event.payload)) {
    return json::serialize(RejectionJson(*rejection));
  }
  return json::serialize(EventLockGrantJson(std::get<LockGrantEvent>(event.payload)));
}

std::uint64_t AppendEvents(const EventHub& hub, std::uint64_t after, std::string* out) {
  for (const HubEvent& event : hub.After(after, kEventsPerWrite)) {
    out->append("id: ").append(std::to_string(event.id));
    out->append(std::holds_alternative<lockstore::RejectionRecord>(event.payload)
                    ? "\nevent: rejection\ndata: "
                    : "\nevent: lock_grant\ndata: ");
    // serialize() escapes control characters, so the data is one line.
    out->append(EventData(event)).append("\n\n");
    after = event.id;
  }
  return after;
}

}  // namespace fencegate::gateway
