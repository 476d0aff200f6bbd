#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/admin/admin_json.h"
#include "gateway/events/event_hub.h"

namespace fencegate::gateway {

// GET /admin/events: server-sent events (text/event-stream) of new rejections and lock grants,
// each with its hub id, for the console's live views (docs/CONSOLE.md). AdminApi answers the
// request with the stream's header (SetEventStreamHeader); the admin session then keeps the
// connection and writes what the hub gets (AdminEventStream in admin_server.cc).
inline constexpr std::string_view kAdminEventsPath = "/admin/events";

// How often an open stream looks for new events, and sends a comment when it had nothing to
// say for a while (so proxies and browsers keep the connection).
inline constexpr std::chrono::milliseconds kEventPollInterval{200};
inline constexpr std::chrono::seconds kEventKeepaliveInterval{15};
// The most events one write of a stream carries.
inline constexpr std::size_t kEventsPerWrite = 256;

// The 200 that opens a stream.
void SetEventStreamHeader(AdminResponse* response);
// True for a response SetEventStreamHeader made: the session streams instead of closing.
bool IsEventStreamResponse(const AdminResponse& response);

// Where a stream starts: after the Last-Event-ID the client sent (a reconnect replays what it
// missed, as far as the ring reaches), else after the newest event (only what comes next).
std::uint64_t EventStreamStart(std::string_view last_event_id, const EventHub& hub);

// Appends the hub's events after `after` (at most kEventsPerWrite) in SSE form to `out`;
// returns the id of the last one appended (`after` when none).
std::uint64_t AppendEvents(const EventHub& hub, std::uint64_t after, std::string* out);

// The JSON of one event's data line (a rejection as /admin/rejections shows it).
std::string EventData(const HubEvent& event);

}  // namespace fencegate::gateway
