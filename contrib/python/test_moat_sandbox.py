"""pytest for moat_sandbox.run (the one-shot API); see conftest.py."""

import os

import pytest

from moat_sandbox import MoatError, run


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
