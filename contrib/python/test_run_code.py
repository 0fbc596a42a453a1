"""pytest for Session.run_code: Python cells in one interpreter that keeps
its state, each with a deadline and an output cap. The session is
host_usr=True (the host's python3). See conftest.py."""

import asyncio
import shutil

import pytest

from moat_sandbox import AsyncSession, Session


@pytest.fixture
def py(env):
    if shutil.which("python3") is None:
        pytest.skip("no python3 on the host for host_usr")
    with Session(moat=env["moat"], root=env["root"], config=env["config"], host_usr=True) as s:
        yield s


def test_cells_share_state_and_report_values_and_errors(py):
    rec = py.run_code("import math\nx = 41\nprint('set')")
    assert rec["fresh"] is True and rec["error"] is None and rec["stdout_text"] == "set\n"
    rec = py.run_code("def inc(v):\n    return v + 1\ninc(x)")
    assert rec["value"] == "42" and rec["fresh"] is False
    rec = py.run_code("1 / 0")
    assert rec["error"]["name"] == "ZeroDivisionError" and rec["value"] is None
    assert "ZeroDivisionError" in rec["error"]["traceback"]
    # an error does not lose the state; nor does a cell's exit()
    assert py.run_code("exit(3)")["error"]["name"] == "SystemExit"
    assert py.run_code("math.floor(x + 0.5)")["value"] == "41"


def test_output_of_the_cell_and_its_subprocesses_capped(py):
    rec = py.run_code("import os, sys\nprint('a' * 100000)\nsys.stderr.write('e\\n')\n"
                      "os.system('echo from-shell; echo shell-err >&2')",
                      output_limit=1000)
    assert rec["stdout_text"] == "a" * 1000
    assert rec["stdout_dropped"] == 100001 + len("from-shell\n") - 1000
    assert rec["stderr_text"] == "e\nshell-err\n" and rec["stderr_dropped"] == 0
    rec = py.run_code("print('next cell, own output')")
    assert rec["stdout_text"] == "next cell, own output\n"


def test_a_cell_past_its_deadline_kills_the_interpreter_the_next_starts_fresh(py):
    py.run_code("kept = 1")
    rec = py.run_code("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                      "while True: time.sleep(0.01)", timeout="500ms")
    assert rec["timed_out"] is True and rec["value"] is None
    rec = py.run_code("kept")
    assert rec["fresh"] is True and rec["error"]["name"] == "NameError"
    # the session itself lives on
    assert py.exec("echo alive")["stdout_text"] == "alive\n"


async def test_async_cells_keep_state_and_run_one_at_a_time(env):
    if shutil.which("python3") is None:
        pytest.skip("no python3 on the host for host_usr")
    async with AsyncSession(moat=env["moat"], root=env["root"], config=env["config"],
                            host_usr=True) as s:
        await s.run_code("n = 0")
        recs = await asyncio.gather(*(s.run_code("n += 1\nn") for _ in range(5)))
        assert sorted(r["value"] for r in recs) == ["1", "2", "3", "4", "5"]
