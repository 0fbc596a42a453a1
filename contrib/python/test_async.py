"""pytest for arun() and AsyncSession (pytest-asyncio), with 20 sessions at
once. See conftest.py."""

import asyncio

import pytest

from moat_sandbox import AsyncSession, MoatError, arun


def asession(box, **kw):
    return AsyncSession(moat=box["moat"], root=box["root"], config=box["config"],
                        rootfs=box["rootfs"], **kw)


async def test_arun(env):
    chunks = []
    rec = await arun("echo hi; exit 4", moat=env["moat"], root=env["root"],
                     config=env["config"], rootfs=env["rootfs"], on_stdout=chunks.append)
    assert rec["exit_code"] == 4
    assert rec["stdout_text"] == "hi\n"
    assert chunks == [b"hi\n"]


async def test_async_session(env):
    async with asession(env) as s:
        await s.exec("echo 1 >/tmp/x")
        rec = await s.exec("cat /tmp/x; echo e >&2")
        assert rec["stdout_text"] == "1\n"
        assert rec["stderr_text"] == "e\n"
        rec = await s.exec("sleep 1000", timeout="200ms")
        assert rec["timed_out"] is True
    with pytest.raises(MoatError):
        await AsyncSession(moat=env["moat"], root=env["root"], config=env["config"]).create()


async def test_twenty_sessions_at_once(env):
    async def one(i):
        async with asession(env, pids=16) as s:
            await s.exec("echo %d >/tmp/mine" % i)
            recs = await asyncio.gather(*(s.exec("cat /tmp/mine") for _ in range(2)))
            return s.id, [r["stdout_text"] for r in recs]

    results = await asyncio.gather(*(one(i) for i in range(20)))
    assert len({sid for sid, _ in results}) == 20
    for i, (_, outs) in enumerate(results):
        assert outs == ["%d\n" % i] * 2
