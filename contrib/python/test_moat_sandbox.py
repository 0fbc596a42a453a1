"""pytest for moat_sandbox.py; needs root, MOAT (the binary) and a busybox."""

import os
import shutil
import subprocess
import tempfile

import pytest

import moat_sandbox
from moat_sandbox import MoatError, run

HERE = os.path.dirname(os.path.abspath(__file__))
MOAT = os.environ.get("MOAT") or os.path.join(HERE, "..", "..", "build", "moat")
BUSYBOX = os.environ.get("BUSYBOX", "/bin/busybox")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="moat needs root")


@pytest.fixture
def env():
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
    bundles = os.listdir(os.path.join(state, ".sandbox")) if os.path.isdir(os.path.join(state, ".sandbox")) else []
    shutil.rmtree(base)
    shutil.rmtree(work)
    assert leftover == [] and bundles == [], "left behind: %s %s" % (leftover, bundles)


def sb(box, cmd, **kw):
    return run(cmd, moat=box["moat"], root=box["root"], config=box["config"],
               rootfs=box["rootfs"], **kw)


def test_output_and_exit(env):
    rec = sb(env, "echo hello; echo oops >&2; exit 3")
    assert rec["exit_code"] == 3
    assert rec["signal"] is None
    assert rec["stdout_text"] == "hello\n"
    assert "oops" in rec["stderr_text"]
    assert rec["stdout"] == {"bytes": 6, "dropped": 0}
    assert rec["id"].startswith("sandbox-")


def test_options(env):
    with open(os.path.join(env["work"], "in.py"), "w") as f:
        f.write("data\n")
    rec = sb(env, ["sh", "-c", "cat in.py; echo $A; wc -c; echo made >out.txt; cat /ro/in.py"],
             workdir=env["work"], env={"A": "b"}, input=b"12345",
             ro_bind={env["work"]: "/ro"})
    assert rec["exit_code"] == 0, rec["stderr_text"]
    assert rec["stdout_text"].split("\n")[:4] == ["data", "b", "5", "data"]
    with open(os.path.join(env["work"], "out.txt")) as f:
        assert f.read() == "made\n"


def test_timeout_and_limits(env):
    rec = sb(env, "while :; do :; done", timeout="500ms", memory="64m", pids=10, cpus=0.5)
    assert rec["timed_out"] is True
    assert rec["limits"]["memory_bytes"] == 64 << 20
    assert rec["limits"]["pids"] == 10
    assert rec["limits"]["cpus"] == 0.5


def test_output_limit(env):
    rec = sb(env, "head -c 100000 /dev/zero", output_limit="1k")
    assert rec["stdout"] == {"bytes": 1024, "dropped": 100000 - 1024}
    assert len(rec["stdout_text"]) == 1024


def test_oom(env):
    rec = sb(env, "x=aaaaaaaa; while :; do x=$x$x; done", memory="32m", timeout="20s")
    assert rec["oom_killed"] is True
    assert rec["signal"] == 9


def test_moat_errors_raise(env):
    with pytest.raises(MoatError) as e:
        sb(env, "true", ro_bind=["/etc:/hostetc"])
    assert "refusing to bind /etc" in str(e.value)
    with pytest.raises(MoatError):
        sb(env, "true", timeout="soon")
    with pytest.raises(TypeError):
        sb(env, "true", bogus=1)


def test_missing_moat():
    with pytest.raises(OSError):
        run("true", moat="/nonexistent/moat", rootfs="/")
