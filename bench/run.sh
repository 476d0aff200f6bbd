#!/usr/bin/env bash
# One command for the whole benchmark: installs the load tools and the reference proxies from
# Debian's packages when missing, builds fencegate when its binary is missing, then runs the
# driver (bench/bench.py; its --help lists the flags, e.g. --reps 3 --duration 3).
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A package_of=(
  [wrk]=wrk [nginx]=nginx-light [haproxy]=haproxy [valgrind]=valgrind
  [callgrind_control]=valgrind [taskset]=util-linux [python3]=python3
  # The nginx_lua peer: the Lua module (with lua-resty-core) for the same nginx binary.
  [/usr/lib/nginx/modules/ngx_http_lua_module.so]=libnginx-mod-http-lua
)
missing=()
for tool in "${!package_of[@]}"; do
  if [[ "$tool" == /* ]]; then
    [ -e "$tool" ] || missing+=("${package_of[$tool]}")
  else
    command -v "$tool" >/dev/null 2>&1 || missing+=("${package_of[$tool]}")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "bench: installing $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null
fi

# The idle-connections workload holds 10,000 sockets in the client and in each proxy.
ulimit -n "$(ulimit -Hn)"

# fencegate is built only when missing, and only when it is benchmarked from its default path
# (--proxies without fencegate, or --fencegate PATH, skip the build). The many_keys workload
# also needs bench/tools/fence_fill, built (FENCEGATE_BUILD_BENCH) in the build directory of
# the fencegate binary when missing there.
proxies=fencegate
workloads=""
fencegate=build/gateway/fencegate
fence_fill=""
own_binary=0
previous=""
for arg in "$@"; do
  case "$previous" in
    --proxies) proxies=$arg ;;
    --workloads) workloads=$arg ;;
    --fencegate) fencegate=$arg ;;
    --fence-fill) fence_fill=$arg ;;
  esac
  case "$arg" in
    --proxies=*) proxies=${arg#--proxies=} ;;
    --workloads=*) workloads=${arg#--workloads=} ;;
    --fencegate=*) fencegate=${arg#--fencegate=} ;;
    --fence-fill=*) fence_fill=${arg#--fence-fill=} ;;
  esac
  [[ "$arg" == --fencegate* ]] && own_binary=1
  previous=$arg
done
if [[ "$proxies" == *fencegate* ]] && [ "$own_binary" -eq 0 ] && [ ! -x "$fencegate" ]; then
  scripts/install-deps.sh
  scripts/build.sh -DFENCEGATE_BUILD_TESTS=OFF -DFENCEGATE_BUILD_BENCH=ON
fi
if { [ -z "$workloads" ] || [[ "$workloads" == *many_keys* ]]; } && [ -z "$fence_fill" ]; then
  build_dir=$(dirname "$(dirname "$fencegate")")
  if [ ! -x "$build_dir/bench/fence_fill" ] && [ -f "$build_dir/CMakeCache.txt" ]; then
    echo "bench: building fence_fill in $build_dir"
    cmake -S . -B "$build_dir" -DFENCEGATE_BUILD_BENCH=ON >/dev/null
    cmake --build "$build_dir" --target fence_fill -j "$(nproc 2>/dev/null || echo 2)"
  fi
fi

exec python3 bench/bench.py "$@"
