#!/usr/bin/env bash
# One command for the whole benchmark: installs the load tools and the reference proxies from
# Debian's packages when missing, builds fencegate when its binary is missing, then runs the
# driver (bench/bench.py; its --help lists the flags, e.g. --reps 3 --duration 3).
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A package_of=(
  [wrk]=wrk [nginx]=nginx-light [haproxy]=haproxy [valgrind]=valgrind
  [callgrind_control]=valgrind [taskset]=util-linux [python3]=python3
)
missing=()
for tool in "${!package_of[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("${package_of[$tool]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "bench: installing $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null
fi

# fencegate is built only when missing, and only when it is benchmarked from its default path
# (--proxies without fencegate, or --fencegate PATH, skip the build).
proxies=fencegate
own_binary=0
previous=""
for arg in "$@"; do
  [ "$previous" = --proxies ] && proxies=$arg
  case "$arg" in
    --proxies=*) proxies=${arg#--proxies=} ;;
    --fencegate | --fencegate=*) own_binary=1 ;;
  esac
  previous=$arg
done
if [[ "$proxies" == *fencegate* ]] && [ "$own_binary" -eq 0 ] && [ ! -x build/gateway/fencegate ]; then
  scripts/install-deps.sh
  scripts/build.sh -DFENCEGATE_BUILD_TESTS=OFF
fi

exec python3 bench/bench.py "$@"
