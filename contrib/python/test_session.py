"""pytest for moat_sandbox.Session (sync) and what run() and Session share:
streaming, moat's messages apart, the binary resolved at call time, a
deadline on moat itself. See conftest.py."""

import os
import stat

import pytest

import moat_sandbox
from moat_sandbox import MoatError, MoatTimeout, Session, list_sessions, run


def session(box, **kw):
    return Session(moat=box["moat"], root=box["root"], config=box["config"],
                   rootfs=box["rootfs"], **kw)


def test_session_keeps_files_between_execs(env):
    with session(env, workdir=env["work"]) as s:
        assert s.id.startswith("session-")
        rec = s.exec("echo 41 >/tmp/n; echo made >/work/out.txt")
        assert rec["exit_code"] == 0 and rec["id"] == s.id
        rec = s.exec(["sh", "-c", "echo $(( $(cat /tmp/n) + 1 )); pwd"])
        assert rec["stdout_text"] == "42\n/work\n"
        assert [x["id"] for x in list_sessions(moat=env["moat"], root=env["root"],
                                               config=env["config"])] == [s.id]
    with open(os.path.join(env["work"], "out.txt")) as f:
        assert f.read() == "made\n"
    assert list_sessions(moat=env["moat"], root=env["root"], config=env["config"]) == []


def test_session_exec_options_and_deadline(env):
    with session(env) as s:
        rec = s.exec("echo $A; pwd; id -u; cat", env={"A": "b"}, cwd="/tmp", user="1000",
                     input="from-stdin\n")
        assert rec["stdout_text"] == "b\n/tmp\n1000\nfrom-stdin\n"
        rec = s.exec("trap '' TERM; sleep 1000", timeout="300ms")
        assert rec["timed_out"] is True
        assert any("timed out" in m for m in rec["moat_messages"])
        assert "timed out" not in rec["stderr_text"]
        assert s.exec("echo still")["stdout_text"] == "still\n"


def test_put_and_get(env):
    src = os.path.join(env["work"], "src")
    os.makedirs(os.path.join(src, "sub"))
    with open(os.path.join(src, "sub", "f.py"), "w") as f:
        f.write("print(1)\n")
    os.chmod(os.path.join(src, "sub", "f.py"), 0o755)
    out = os.path.join(env["work"], "out")
    os.mkdir(out)
    with session(env) as s:
        s.put(src, "/tmp")
        rec = s.exec("cat /tmp/src/sub/f.py; echo result >/tmp/src/r.txt")
        assert rec["stdout_text"] == "print(1)\n"
        s.get("/tmp/src", out)
        with pytest.raises(MoatError):
            s.put(src, "/etc")  # the root is read-only
    with open(os.path.join(out, "src", "r.txt")) as f:
        assert f.read() == "result\n"
    assert stat.S_IMODE(os.stat(os.path.join(out, "src", "sub", "f.py")).st_mode) == 0o755


def test_streaming_callbacks_and_messages_apart(env):
    got_out, got_err = [], []
    rec = run("echo one; echo two >&2; echo moat: not moat >&2", moat=env["moat"],
              root=env["root"], config=env["config"], rootfs=env["rootfs"], pids=100000,
              on_stdout=got_out.append, on_stderr=got_err.append)
    assert b"".join(got_out) == b"one\n"
    assert b"".join(got_err) == b"two\nmoat: not moat\n"
    assert rec["stderr_text"] == "two\nmoat: not moat\n"
    # the clamp is moat's, and only in moat_messages
    assert any("--pids 100000" in m and "clamped" in m for m in rec["moat_messages"])
    with session(env) as s:
        chunks = []
        rec = s.exec("for i in 1 2 3; do echo $i; done", on_stdout=chunks.append)
        assert b"".join(chunks) == b"1\n2\n3\n"


def test_moat_binary_resolved_at_call_time(env, monkeypatch):
    monkeypatch.setenv("MOAT", "/nonexistent/moat-at-call-time")
    with pytest.raises(OSError):
        run("true", rootfs=env["rootfs"], root=env["root"], config=env["config"])
    monkeypatch.setenv("MOAT", env["moat"])
    rec = run("true", rootfs=env["rootfs"], root=env["root"], config=env["config"])
    assert rec["exit_code"] == 0
    assert moat_sandbox.moat_binary(None) == env["moat"]


def test_deadline_on_moat_itself(env):
    # moat's own deadline is 5 s; the caller gives moat 1 s in all.
    with pytest.raises(MoatTimeout):
        run("sleep 5", moat=env["moat"], root=env["root"], config=env["config"],
            rootfs=env["rootfs"], timeout="5s", moat_timeout=1)
    # moat was killed; its watchdog removes the sandbox (checked by the
    # fixture), once it has run
    for _ in range(100):
        left = os.listdir(os.path.join(env["root"], ".sandbox"))
        if not left:
            break
        import time
        time.sleep(0.05)


def test_host_usr(env):
    if not os.path.exists("/usr/bin/python3"):
        pytest.skip("no /usr/bin/python3")
    rec = run(["python3", "-c", "print(6 * 7)"], host_usr=True, moat=env["moat"],
              root=env["root"], config=env["config"])
    assert rec["stdout_text"] == "42\n", rec


def test_unknown_option_and_moat_error(env):
    with pytest.raises(TypeError):
        session(env, bogus=1)
    with pytest.raises(MoatError) as e:
        Session(moat=env["moat"], root=env["root"], config=env["config"]).create()
    assert "give one of --rootfs DIR and --image DIR" in str(e.value)
