#!/usr/bin/env bash
# promtool with the given arguments (`check rules FILE`, `test rules FILE`); exits 77 (ctest's
# skip) when promtool is not installed: scripts/install-deps.sh installs it (package prometheus).
set -euo pipefail
if ! command -v promtool >/dev/null; then
  echo "promtool is not installed (Debian package prometheus): skipped"
  exit 77
fi
exec promtool "$@"
