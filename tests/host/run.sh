#!/usr/bin/env bash
# `make check-host`: moat on a standard host. Builds (or reuses) the Debian
# 12 guest (build-image.sh), boots it under qemu (TCG: KVM is not assumed)
# with this checkout shared read-only over 9p, lets it run tests/host/guest.sh,
# and reports the results here. moat is built on the host first (same Debian
# release and libraries as the guest; building under TCG takes ~2 min).
# Env: MOAT_HOST_OUT (results dir, default build/host), MOAT_HOST_TIMEOUT
# (seconds, default 2700), MOAT_HOST_MEM (MiB, default 2048), MOAT_HOST_BATS
# (lines "FILE [REGEX]" to run instead of tests/host/bats.list).
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
out=${MOAT_HOST_OUT:-$src/build/host}
timeout_s=${MOAT_HOST_TIMEOUT:-2700}
now() { date +%s; }

t0=$(now)
img=$(tests/host/build-image.sh | tail -1)
t1=$(now)

rm -rf "$out"
mkdir -p "$out/bin/tests"
echo "check-host: image $img ($((t1 - t0)) s)"
# A copy of what `make check-host` built: a rebuild during the run must
# not change the binaries under the guest's feet.
cp build/moat "$out/bin/moat"
# A statically linked moat runs the systemd driver's calls in moat-dl,
# which it finds beside itself (lib/dynlib.h).
[ ! -e build/moat-dl ] || cp build/moat-dl "$out/bin/moat-dl"
cp -r build/tests/cmd build/tests/unit "$out/bin/tests/"
if [ -n "${MOAT_HOST_BATS:-}" ]; then
  printf '%s\n' "$MOAT_HOST_BATS" >"$out/bats.list"
else
  cp tests/host/bats.list "$out/bats.list"
fi

# The guest boots with its root image as a throw-away snapshot: the cached
# image is never written.
t2=$(now)
status=0
timeout "$timeout_s" qemu-system-x86_64 -accel tcg -cpu max -smp 2 \
  -m "${MOAT_HOST_MEM:-2048}" -display none -monitor none -no-reboot \
  -kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
  -append "root=/dev/vda rw console=ttyS0 systemd.show_status=0 loglevel=4 panic=-1" \
  -drive "file=$img/rootfs.img,format=raw,if=virtio,snapshot=on" \
  -virtfs "local,path=$src,mount_tag=moatsrc,security_model=none,readonly=on" \
  -virtfs "local,path=$out,mount_tag=moatout,security_model=none" \
  -nic none -serial "file:$out/console.log" || status=$?
t3=$(now)

echo "check-host: guest ran $((t3 - t2)) s (qemu exit $status)"
[ -f "$out/env.txt" ] && sed 's/^/check-host:   /' "$out/env.txt"
if [ ! -f "$out/rc" ]; then
  echo "check-host: the guest did not finish (timeout ${timeout_s} s?); console:" >&2
  tail -40 "$out/console.log" >&2 || true
  exit 1
fi
grep -E '^(not ok|FAILED)' "$out/unit.log" "$out/bats.tap" 2>/dev/null || true
for f in bats.tap; do
  [ -f "$out/$f" ] || continue
  printf 'check-host: %-10s %3d ok, %d not ok, %d skipped\n' "$f" \
    "$(grep -c '^ok' "$out/$f")" "$(grep -c '^not ok' "$out/$f")" \
    "$(grep -c '^ok .* # skip' "$out/$f")"
done
printf 'check-host: unit tests  %d binaries, %d failed\n' \
  "$(grep -c '^== ' "$out/unit.log")" "$(grep -c '^FAILED' "$out/unit.log")"
echo "check-host: total $((t3 - t0)) s; results in $out"
exit "$(cat "$out/rc")"
