"""Shared by the tests: a busybox rootfs, a state root and an operator config
of their own; needs root, MOAT (the binary) and a busybox. Each test ends by
checking that moat left nothing behind."""

import os
import shutil
import subprocess
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MOAT = os.environ.get("MOAT") or os.path.join(HERE, "..", "..", "build", "moat")
BUSYBOX = os.environ.get("BUSYBOX", "/bin/busybox")


@pytest.fixture
def env():
    if os.geteuid() != 0:
        pytest.skip("moat needs root")
    base = tempfile.mkdtemp(prefix="moat-py.")
    rootfs = os.path.join(base, "rootfs")
    os.makedirs(os.path.join(rootfs, "bin"))
    for d in ("proc", "dev", "sys", "tmp", "etc", "work", "root", "var/tmp"):
        os.makedirs(os.path.join(rootfs, d), exist_ok=True)
    shutil.copy(BUSYBOX, os.path.join(rootfs, "bin", "busybox"))
    for a in subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True).stdout.split():
        if a != "busybox":
            os.symlink("busybox", os.path.join(rootfs, "bin", a))
    os.makedirs(os.path.join(base, "log"))
    config = os.path.join(base, "config.json")
    with open(config, "w") as f:
        f.write('{"audit_log": "%s/log/audit.jsonl"}' % base)
    work = tempfile.mkdtemp(prefix="moat-py-work.")
    state = os.path.join(base, "state")
    yield {"rootfs": rootfs, "moat": MOAT, "root": state, "config": config, "work": work}
    leftover = [e for e in os.listdir(state) if not e.startswith(".")] if os.path.isdir(state) else []
    bundles = []
    for d in (".sandbox", ".session"):
        if os.path.isdir(os.path.join(state, d)):
            bundles += os.listdir(os.path.join(state, d))
    shutil.rmtree(base)
    shutil.rmtree(work)
    assert leftover == [] and bundles == [], "left behind: %s %s" % (leftover, bundles)


