#pragma once

#include <span>
#include <string_view>

namespace fencegate::gateway {

// One file of the browser console, built into the binary (gateway/console/embed_assets.cmake).
struct ConsoleAsset {
  std::string_view path;          // under /ui/, e.g. "/ui/app.js"; "/ui/" is the page
  std::string_view content_type;  // with charset for text
  std::string_view etag;          // quoted strong validator: part of the file's SHA-256
  std::string_view body;
};

// Every console file; the page is the one whose path is "/ui/".
std::span<const ConsoleAsset> ConsoleAssets();

// The file served at `path`, or null.
const ConsoleAsset* FindConsoleAsset(std::string_view path);

}  // namespace fencegate::gateway
