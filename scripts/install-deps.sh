#!/usr/bin/env bash
# Installs the Debian 12 packages fencegate needs to build, run and test. Idempotent: quiet and
# quick when everything is already there.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libboost1.81-all-dev libboost-json1.81-dev libboost-url1.81-dev libexpat1-dev
  libssl-dev librocksdb-dev prometheus-cpp-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev
  # sd_notify readiness for the systemd unit (gateway/server/service_notify.cc).
  libsystemd-dev
  # Chart.js (MIT), built into the browser console's files at build time (gateway/console/).
  libjs-chart.js
  # The package stage (tests/deploy/): cpack's dpkg-shlibdeps, the man page lint, the unit's
  # systemd-analyze verify, logrotate -d of the installed rotation.
  dpkg-dev mandoc systemd logrotate
  curl procps
  # Lock services and their clients, for examples/ and tests/lock_services/.
  etcd-server etcd-client redis-server postgresql zookeeperd
  python3 python3-redis python3-psycopg2 python3-kazoo
  # The "clients" stage: the OpenAPI description's check (tests/api/), the Python client library
  # (clients/python/: installed into a venv from the checkout with Debian's build backend).
  python3-yaml python3-jsonschema python3-venv python3-pip python3-setuptools mypy
  # Fault tests (tests/faults/): wall-clock jumps, an ext4 image to turn read-only, mount(8).
  faketime e2fsprogs mount
  # Sanitizer and fuzz stages of scripts/test.sh: clang, its runtimes (ASan, UBSan, TSan,
  # libFuzzer) and llvm-symbolizer for readable reports.
  clang-14 libclang-rt-14-dev llvm-14
  # TLS tests: certificates made with the openssl CLI; nginx as an https backend.
  openssl nginx-light
  # WebDAV adapter tests (tests/webdav/): Apache 2.4 with mod_dav_fs (honours conditions), and
  # nginx's WebDAV with the dav-ext module (PROPFIND, LOCK; ignores If, no PROPPATCH) as the
  # server the condition probe must catch. Installs alongside nginx-light (same nginx 1.22).
  apache2 libnginx-mod-http-dav-ext
  # The s3 adapter's tests (tests/s3/): a throwaway Ceph radosgw, and awscli as a real client.
  radosgw ceph-mon ceph-osd ceph-common awscli
  # Several replicas: the load balancer example (config/examples/haproxy-replicas.cfg) is
  # checked with haproxy -c.
  haproxy
  # The browser stage (tests/browser/): the console in headless Chromium, driven by Selenium.
  chromium chromium-driver python3-selenium
  # promtool, which checks and unit-tests deploy/prometheus/alerts.yml (tests/deploy/). Only the
  # tool is wanted: the Prometheus server the package also installs is stopped below.
  prometheus
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
# npm installs s3rver below; Debian's nodejs and npm where no node is installed yet.
command -v npm >/dev/null || missing+=(nodejs npm)

if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
  # The prometheus package enables and starts its server where services run; the tests need only
  # promtool, so nothing should keep listening on :9090.
  if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null &&
    systemctl is-active --quiet prometheus 2>/dev/null; then
    "${sudo_cmd[@]}" systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
fi

# s3rver (npm), the S3 server that accepts If-Match / If-None-Match and ignores them: the lying
# backend of the condition probe tests (tests/s3/, tests/support/s3rver.sh). Pinned, in a prefix
# of its own so nothing global changes; skipped when that version is there.
s3rver_prefix=/opt/fencegate-test/npm
s3rver_version=3.7.1
installed=$(node -p "require('$s3rver_prefix/node_modules/s3rver/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$s3rver_version" ]; then
  echo "install-deps: installing s3rver@$s3rver_version into $s3rver_prefix"
  "${sudo_cmd[@]}" mkdir -p "$s3rver_prefix"
  "${sudo_cmd[@]}" npm install --prefix "$s3rver_prefix" --no-audit --no-fund --loglevel=error \
    "s3rver@$s3rver_version" >/dev/null
fi
