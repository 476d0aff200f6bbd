#!/usr/bin/env bash
# The "package" stage of scripts/test.sh: builds the .deb in BUILD_DIR (configured with
# -DCMAKE_INSTALL_PREFIX=/usr), checks its contents and control data with dpkg-deb, installs it,
# and runs the installed binary with the installed configuration from /: --check-config, a start
# as the package's user, a fenced write, a SIGHUP reload, a stop; then remove (the state stays)
# and purge (the state goes).
#
# As root on a machine where fencegate is not installed it installs into the machine with
# dpkg -i (CI: a fresh Debian 12). Otherwise (not root, or a fencegate package already
# installed that this must not replace) it unpacks into a scratch root with dpkg-deb -x, runs
# the binary from there with the configuration's absolute paths moved under that root, and says
# so; the maintainer scripts are then not run.
#
# Usage: check_package.sh BUILD_DIR
set -euo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$(dirname "$0")/../..")
work=$(mktemp -d)
gateway_pid=
installed=
cleanup() {
  if [ -n "$gateway_pid" ] && kill -0 "$gateway_pid" 2>/dev/null; then
    kill -KILL "$gateway_pid" 2>/dev/null || true
  fi
  # A failed check leaves no package behind that the next run would take for someone else's.
  if [ -n "$installed" ]; then dpkg -P fencegate >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

# ---- Build and inspect --------------------------------------------------------------------
step "cpack -G DEB in $build_dir"
rm -f "$build_dir"/fencegate_*.deb
(cd "$build_dir" && timeout 600 cpack -G DEB >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$build_dir"/fencegate_*.deb)
echo "built $deb"

step "dpkg-deb -I"
dpkg-deb -I "$deb" | tee "$work/info"
depends=$(dpkg-deb -f "$deb" Depends)
# RocksDB is linked statically (the RocksDB CMake package of librocksdb-dev names the .a); its
# compression libraries are dependencies instead (libsnappy1v5, libzstd1, ...).
for library in libc6 libstdc++6 libyaml-cpp libssl3 libsystemd0 libboost-json libsnappy adduser; do
  grep -q "$library" <<<"$depends" || fail "Depends lacks $library: $depends"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -x -O ./conffiles >"$work/conffiles"
for conffile in /etc/fencegate/fencegate.yaml /etc/logrotate.d/fencegate; do
  grep -qx "$conffile" "$work/conffiles" || fail "$conffile is not a conffile"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -t >"$work/control-files"
for script in postinst prerm postrm; do
  grep -qx "./$script" "$work/control-files" || fail "no $script"
done

step "dpkg-deb -c"
dpkg-deb -c "$deb" | tee "$work/contents"
for file in ./usr/bin/fencegate ./etc/fencegate/fencegate.yaml ./etc/logrotate.d/fencegate \
    ./usr/lib/systemd/system/fencegate.service ./usr/share/man/man8/fencegate.8.gz \
    ./usr/share/bash-completion/completions/fencegate \
    ./usr/share/doc/fencegate/full-reference.yaml ./usr/share/doc/fencegate/grafana/fencegate.json \
    ./usr/share/doc/fencegate/prometheus/alerts.yml; do
  awk '{print $NF}' "$work/contents" | grep -qx "$file" || fail "$file is not in the package"
done
if awk '{print $NF}' "$work/contents" | grep -q '^\./usr/etc'; then
  fail "configuration under /usr/etc"
fi

# ---- Install ------------------------------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && ! dpkg-query -W fencegate >/dev/null 2>&1; then
  mode=machine
  root=
  step "dpkg -i (into this machine)"
  installed=yes
  dpkg -i "$deb"
  getent passwd fencegate >/dev/null || fail "postinst did not create the user fencegate"
  [ "$(stat -c '%U:%G %a' /var/lib/fencegate)" = "fencegate:fencegate 750" ] ||
    fail "/var/lib/fencegate: $(stat -c '%U:%G %a' /var/lib/fencegate)"
  # Under a running systemd postinst started the service: this test runs its own instance.
  if [ -d /run/systemd/system ]; then systemctl stop fencegate.service || true; fi
  # setpriv execs the gateway (runuser would stay its parent): $! is the gateway's pid.
  run_as=(setpriv --reuid=fencegate --regid=fencegate --init-groups --)
else
  mode=scratch
  root=$work/root
  step "not root or fencegate already installed: unpacking into the scratch root $root"
  dpkg-deb -x "$deb" "$root"
  mkdir -p "$root/var/lib/fencegate" "$root/var/log/fencegate"
  # The configuration's absolute paths, moved under the scratch root.
  sed -e "s#/var/lib/fencegate#$root/var/lib/fencegate#" \
      -e "s#/var/log/fencegate#$root/var/log/fencegate#" \
      "$root/etc/fencegate/fencegate.yaml" >"$work/fencegate.yaml"
  run_as=()
fi
binary=$root/usr/bin/fencegate
config=$root/etc/fencegate/fencegate.yaml
[ "$mode" = machine ] || config=$work/fencegate.yaml
data_dir=$root/var/lib/fencegate
log_dir=$root/var/log/fencegate

step "the installed binary, from /"
cd /
"$binary" --version
"$binary" --check-config "$config" | tee "$work/check"
grep -qx "$config: OK" "$work/check" || fail "--check-config"

if command -v systemd-analyze >/dev/null; then
  unit=$root/usr/lib/systemd/system/fencegate.service
  if [ "$mode" = machine ] && man -w fencegate >/dev/null 2>&1; then
    systemd-analyze verify "$unit" || fail "systemd-analyze verify $unit"
  else
    sed "s#/usr/bin/fencegate#$binary#g" "$unit" >"$work/fencegate.service"
    systemd-analyze verify --man=no "$work/fencegate.service" || fail "systemd-analyze verify"
  fi
  echo "systemd-analyze verify: clean"
fi
if command -v logrotate >/dev/null; then
  logrotate -d "$root/etc/logrotate.d/fencegate" >"$work/logrotate.log" 2>&1 ||
    { cat "$work/logrotate.log"; fail "logrotate -d"; }
fi

step "start (${run_as[*]:-as $(id -un)}), on free ports"
"${run_as[@]}" "$binary" --config "$config" --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 \
  >"$work/stdout" 2>"$work/stderr" &
gateway_pid=$!
# The listening line the gateway reports, through the bounded wait every harness uses
# (tests/support/wait_until.py); it gives up at once if the gateway exits.
python3 - "$work/stdout" "$gateway_pid" "$source_dir/tests/support" <<'PY' ||
import os, sys
sys.path.insert(0, sys.argv[3])
from wait_until import wait_until
stdout, pid = sys.argv[1], int(sys.argv[2])
def listening():
    os.kill(pid, 0)  # raises once the gateway has exited
    with open(stdout) as f:
        return any(line.startswith("fencegate listening") for line in f)
wait_until(listening, "the gateway's listening line", 30)
PY
  { cat "$work/stderr"; fail "the gateway did not report listening"; }
line=$(grep '^fencegate listening' "$work/stdout") || { cat "$work/stderr"; fail "not listening"; }
traffic=$(sed -E 's/.*traffic=([^ ]+).*/\1/' <<<"$line")
admin=$(sed -E 's/.*admin=([^ ]+).*/\1/' <<<"$line")
echo "$line"
if [ "$mode" = machine ]; then
  [ "$(awk '/^Uid:/ {print $2}' /proc/$gateway_pid/status)" = "$(id -u fencegate)" ] ||
    fail "the gateway does not run as fencegate"
fi

# put TOKEN BODY: the HTTP status of a fenced write of /files/package-check.txt.
put() {
  curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -X PUT -H "Fencing-Token: $1" \
    --data-binary "$2" "http://$traffic/files/package-check.txt"
}
step "fenced writes"
status=$(put 5 first); [[ $status == 20[14] ]] || fail "PUT with token 5: $status"
status=$(put 4 stale); [ "$status" = 409 ] || fail "PUT with the stale token 4: $status"
[ "$(curl -sS --max-time 10 "http://$traffic/files/package-check.txt")" = first ] ||
  fail "GET does not return the write"
[ "$(cat "$data_dir/files/package-check.txt")" = first ] || fail "the file is not in the data dir"
grep -q '"status":409' "$log_dir/access.log" || fail "no access log line in $log_dir"

step "SIGHUP reload"
kill -HUP "$gateway_pid"
status=$(put 6 after-reload); [[ $status == 20[14] ]] || fail "PUT after SIGHUP: $status"
kill -0 "$gateway_pid" || fail "the gateway did not survive SIGHUP"
[ "$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://$admin/readyz")" = 200 ] ||
  fail "not ready after SIGHUP"

step "SIGTERM"
kill -TERM "$gateway_pid"
status=0
wait "$gateway_pid" || status=$?
gateway_pid=
[ "$status" -eq 0 ] || { cat "$work/stderr"; fail "exit status $status after SIGTERM"; }

if [ "$mode" = machine ]; then
  step "dpkg -r: the state stays"
  dpkg -r fencegate
  [ -f /var/lib/fencegate/fences.identity ] || fail "remove deleted the fence store"
  [ -f /etc/fencegate/fencegate.yaml ] || fail "remove deleted the conffile"
  step "dpkg -P: the state goes"
  dpkg -P fencegate
  installed=
  [ ! -e /var/lib/fencegate ] || fail "purge kept /var/lib/fencegate"
  [ ! -e /etc/fencegate/fencegate.yaml ] || fail "purge kept the conffile"
fi
echo "package check passed ($mode)"
