#!/bin/sh
# Install what moat needs to build and test on a fresh Debian 12 machine.
# Only installs what is missing; needs root (apt-get) for that.
set -e
pkgs="build-essential pkg-config libseccomp-dev libcap-dev libyajl-dev libselinux1-dev
libsystemd-dev nettle-dev libcmocka-dev bats jq busybox-static iproute2 clang clang-format libclang-rt-14-dev
time valgrind scdoc libarchive-dev python3-pytest python3-pytest-asyncio python3-mypy python3-pip python3-setuptools python3-venv bubblewrap
nodejs libpython3.11-testsuite strace bpftool debootstrap podman"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing" >&2
if [ "$(id -u)" != 0 ]; then
  echo "deps: need root to install:$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
