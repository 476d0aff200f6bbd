#!/usr/bin/env bash
# Installs what is missing, builds, and runs the gateway on its embedded defaults
# (config/fencegate.yaml: traffic on 127.0.0.1:8080, admin on 127.0.0.1:9901, state in ./var).
# Extra arguments are passed to fencegate, e.g. --listen 127.0.0.1:0.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh -DFENCEGATE_BUILD_TESTS=OFF
exec build/gateway/fencegate --config config/fencegate.yaml "$@"
