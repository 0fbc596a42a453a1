#!/usr/bin/env bash
# Build the "standard host" guest for `make check-host`: Debian 12 (bookworm)
# with systemd as PID 1 and a pure cgroup v2 hierarchy, the Debian 6.1 kernel,
# containerd, and what moat's tests need at run time. moat itself is built on
# the host (same Debian release, same libraries) and shared in over 9p.
#
# Output: $MOAT_HOST_CACHE/<key>/{rootfs.img,vmlinuz,initrd.img,KEY}, keyed by
# a hash of this script and the kernel version, so a machine builds it once.
# Prints the image directory on stdout. Needs root (debootstrap, chroot).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${MOAT_HOST_CACHE:-/var/cache/moat-host}
suite=bookworm
# The guest's packages: systemd + dbus (the systemd cgroup driver), udev
# (virtio devices), the run-time libraries of a host-built moat, the test
# tools, and containerd (ctr) for one engine run.
pkgs=(systemd systemd-sysv dbus udev kmod procps iproute2 util-linux
  libseccomp2 libcap2 libyajl2 libselinux1 libmount1 libarchive13 libsystemd0 libcmocka0
  bats jq busybox-static containerd ca-certificates)

log() { printf 'build-image: %s\n' "$*" >&2; }

# The kernel: Debian's 6.1 (linux-image-amd64), as on a Debian 12 host.
kver=${MOAT_HOST_KVER:-}
if [ -z "$kver" ]; then
  kver=$(find /boot -maxdepth 1 -name 'vmlinuz-6.1.*' -printf '%f\n' 2>/dev/null |
    sed 's/^vmlinuz-//' | sort -V | tail -1)
fi
missing=""
for t in debootstrap mkfs.ext4 depmod qemu-system-x86_64; do
  command -v "$t" >/dev/null || missing="$missing $t"
done
if [ -z "$kver" ] || [ ! -e "/boot/initrd.img-$kver" ] || [ ! -d "/lib/modules/$kver" ] ||
  [ -n "$missing" ]; then
  if [ "${MOAT_HOST_NO_INSTALL:-0}" = 1 ]; then
    log "missing: a Debian 6.1 kernel in /boot or$missing" \
      "(apt-get install linux-image-amd64 qemu-system-x86 debootstrap e2fsprogs kmod)"
    exit 1
  fi
  log "installing linux-image-amd64 and the image tools"
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends linux-image-amd64 qemu-system-x86 qemu-utils debootstrap \
    e2fsprogs kmod >/dev/null
  MOAT_HOST_NO_INSTALL=1 exec "$0" "$@"
fi

key=$( (
  cat "$here/build-image.sh"
  echo "$kver"
) | sha256sum | cut -c1-16)
dir="$cache/$key"
if [ -s "$dir/KEY" ]; then
  log "cached: $dir"
  echo "$dir"
  exit 0
fi

# The mirror this host's apt takes $suite from, and nothing else: no
# built-in host name (a machine may reach only its own mirror). deb822
# stanzas (URIs + Suites) first, then one-line "deb [options] URI SUITE"
# entries.
mirror=$(
  cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk -v suite="$suite" 'BEGIN { deb = 1 }
      /^[[:space:]]*$/ { if (uri != "" && ok) { print uri; exit } uri = ""; ok = 0; deb = 1; next }
      /^Types:/ { deb = 0; for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
      /^URIs:/ { if (deb) uri = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
      END { if (uri != "" && ok) print uri }' | head -1
)
if [ -z "$mirror" ]; then
  mirror=$(
    grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -E 's/\[[^]]*\][[:space:]]*//' |
      awk -v suite="$suite" '$3 == suite {print $2; exit}'
  )
fi
if [ -z "$mirror" ]; then
  log "no apt source for $suite in /etc/apt/sources.list or /etc/apt/sources.list.d: add this host's Debian mirror there (debootstrap takes it from there)"
  exit 1
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
cleanup() {
  for m in proc sys dev; do umount -l "$work/root/$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
root=$work/root

t0=$(date +%s)
log "debootstrap $suite from $mirror"
inc=$(
  IFS=,
  echo "${pkgs[*]}"
)
debootstrap --variant=minbase --include="$inc" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -30 "$work/debootstrap.log" >&2
  exit 1
}
t1=$(date +%s)
log "debootstrap done in $((t1 - t0)) s"

# Kernel modules: everything a server kernel loads here, not the desktop drivers.
mkdir -p "$root/lib/modules"
tar -C /lib/modules -cf - \
  --exclude="$kver/kernel/sound" --exclude="$kver/kernel/drivers/gpu" \
  --exclude="$kver/kernel/drivers/media" --exclude="$kver/kernel/drivers/net/wireless" \
  --exclude="$kver/kernel/drivers/infiniband" --exclude="$kver/kernel/drivers/staging" \
  --exclude="$kver/kernel/drivers/bluetooth" --exclude="$kver/kernel/drivers/iio" \
  --exclude="$kver/kernel/drivers/usb" --exclude="$kver/kernel/drivers/hid" \
  --exclude="$kver/kernel/drivers/isdn" --exclude="$kver/kernel/drivers/input" \
  "$kver" | tar -C "$root/lib/modules" -xf -
depmod -b "$root" "$kver"

# Configuration: no fstab entries (root comes from the kernel command line),
# no login, a unit that runs the test script from the 9p share and powers off.
echo moat-host >"$root/etc/hostname"
printf '127.0.0.1 localhost moat-host\n::1 localhost\n' >"$root/etc/hosts"
: >"$root/etc/fstab"
printf '9p\n9pnet\n9pnet_virtio\n' >"$root/etc/modules-load.d/9p.conf"
mkdir -p "$root/mnt/src" "$root/mnt/out"
cat >"$root/etc/systemd/system/moat-host-test.service" <<'EOF'
[Unit]
Description=moat check-host: run the tests from the 9p share, then power off
After=multi-user.target dbus.service containerd.service systemd-modules-load.service
Wants=dbus.service

[Service]
Type=oneshot
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
ExecStartPre=/bin/mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 moatsrc /mnt/src
ExecStartPre=/bin/mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 moatout /mnt/out
ExecStart=/bin/bash /mnt/src/tests/host/guest.sh
ExecStopPost=/bin/systemctl --no-block poweroff
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
chroot "$root" systemctl enable moat-host-test.service >/dev/null 2>&1
# No getty on the console: the test unit owns it.
chroot "$root" systemctl mask serial-getty@ttyS0.service getty@tty1.service \
  systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer >/dev/null 2>&1 || true
# containerd is started by the test script when it gets there.
chroot "$root" systemctl disable containerd.service >/dev/null 2>&1 || true
chroot "$root" apt-get clean
rm -rf "$root/var/lib/apt/lists"/* "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/locale"

log "mkfs.ext4 -d"
size_mb=$(($(du -sm "$root" | cut -f1) + 3072))
mkfs.ext4 -q -F -L moatroot -d "$root" "$work/rootfs.img" "${size_mb}M"
cp "/boot/vmlinuz-$kver" "$work/vmlinuz"
cp "/boot/initrd.img-$kver" "$work/initrd.img"
t2=$(date +%s)
log "image built in $((t2 - t0)) s (debootstrap $((t1 - t0)) s)"

mkdir -p "$dir"
mv "$work/rootfs.img" "$work/vmlinuz" "$work/initrd.img" "$dir/"
printf '%s\nkernel %s\nmirror %s\nbuilt %s in %s s\n' "$key" "$kver" "$mirror" \
  "$(date -u +%FT%TZ)" "$((t2 - t0))" >"$dir/KEY"
# Older images of this cache are stale now.
find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name "$key" ! -name 'build.*' \
  -exec rm -rf {} + 2>/dev/null || true
echo "$dir"
