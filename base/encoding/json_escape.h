#pragma once

#include <string>
#include <string_view>

namespace fencegate::gateway {

// Appends `text` to `out` as a JSON string literal (with the quotes). Control characters,
// quotes and backslashes are escaped; bytes >= 0x80 pass through (request paths and header
// values are logged as sent, so invalid UTF-8 is escaped byte-wise as \u00XX instead).
void AppendJsonString(std::string_view text, std::string* out);

// The same without the surrounding quotes, for values assembled from several pieces.
void AppendJsonEscaped(std::string_view text, std::string* out);

// Appends the member name `key` of an object being written ("key":), after a comma unless it
// is the object's first member. `key` is written as it is: a name the caller spells, never input.
void AppendJsonKey(std::string_view key, std::string* out);

}  // namespace fencegate::gateway
