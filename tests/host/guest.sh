#!/bin/bash
# Runs INSIDE the check-host guest (Debian 12, systemd as PID 1, pure cgroup
# v2), started by moat-host-test.service from the read-only 9p share of the
# checkout at /mnt/src; results go to /mnt/out (a 9p share the host reads):
#   env.txt       what the guest is (kernel, PID 1, cgroup layout)
#   unit.log      the unit tests' output
#   bats.tap      the integration tests (TAP)
#   rc            0 when everything passed
# The moat binaries come from the host (run.sh copies build/ to
# /mnt/out/bin), built against the same Debian release.
set -u
src=/mnt/src
out=/mnt/out
bin=$out/bin
export MOAT=$bin/moat MOAT_TESTBIN=$bin/tests/cmd
export BATS_TMPDIR=/tmp TMPDIR=/tmp
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
rc=0
now() { date +%s; }
step() { echo "check-host: $*" >/dev/ttyS0 2>/dev/null || true; }

t0=$(now)
{
  echo "uptime-at-start $(cut -d' ' -f1 /proc/uptime)"
  echo "kernel $(uname -r)"
  echo "pid1 $(cat /proc/1/comm)"
  echo "cgroupfs $(stat -fc %T /sys/fs/cgroup)"
  echo "controllers $(cat /sys/fs/cgroup/cgroup.controllers)"
  echo "root-subtree_control $(cat /sys/fs/cgroup/cgroup.subtree_control)"
  echo "system-running $(systemctl is-system-running 2>&1)"
  echo "systemd $(systemctl --version | head -1)"
} >"$out/env.txt" 2>&1

# Unit tests: every one the host built.
step "unit tests"
: >"$out/unit.log"
for t in "$bin"/tests/unit/test_*; do
  [ -x "$t" ] || continue
  echo "== $t" >>"$out/unit.log"
  # From the checkout: the tests read tests/fixtures.
  if ! (cd "$src" && "$t") >>"$out/unit.log" 2>&1; then
    echo "FAILED: $t" >>"$out/unit.log"
    rc=1
  fi
done
t1=$(now)

# Integration tests: the subset in tests/host/bats.list (file and filter;
# run.sh puts it, or the MOAT_HOST_BATS lines, in /mnt/out/bats.list),
# with the guest's own systemd and engine tests (tests/host/*.bats).
step "bats"
: >"$out/bats.tap"
while read -r file filter; do
  case "$file" in '' | '#'*) continue ;; esac
  step "bats $file ${filter:-}"
  args=(--tap)
  [ -n "${filter:-}" ] && args+=(-f "$filter")
  echo "# $file ${filter:-}" >>"$out/bats.tap"
  # stdin is the list: a test reading stdin (ctr, systemctl) must not eat it.
  bats "${args[@]}" "$src/$file" >>"$out/bats.tap" 2>&1 </dev/null || rc=1
done <"$out/bats.list"
t2=$(now)

{
  echo "unit-seconds $((t1 - t0))"
  echo "bats-seconds $((t2 - t1))"
} >>"$out/env.txt"
echo "$rc" >"$out/rc"
sync
step "done rc=$rc"
