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

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
# The prometheus package enables and starts its server where services run; the tests need only
# promtool, so nothing should keep listening on :9090.
if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null &&
  systemctl is-active --quiet prometheus 2>/dev/null; then
  "${sudo_cmd[@]}" systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
