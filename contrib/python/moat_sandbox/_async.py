"""The asyncio API: arun() and AsyncSession, the same as run() and Session
without blocking the event loop."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from typing import List, Optional, Tuple, Union

from ._core import (SANDBOX_OPTIONS, Callback, Command, MoatTimeout, Record, SessionBase,
                    command_argv, fail, finish_record, global_flags, moat_binary,
                    moat_deadline, option_flags)
from ._code import DEFAULT_CELL_OUTPUT_LIMIT
from ._sync import _with_input

Streams = Tuple[int, bytes, bytes, bytes]


async def _read_all(reader: asyncio.StreamReader, callback: Optional[Callback]) -> bytes:
    chunks: List[bytes] = []
    while True:
        data = await reader.read(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)
        if callback:
            callback(data)


async def _drive(head: List[str], tail: List[str], deadline_s: float,
                 on_stdout: Optional[Callback], on_stderr: Optional[Callback]) -> Streams:
    loop = asyncio.get_running_loop()
    r, w = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *(head + ["--stderr-fd", str(w)] + tail), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, pass_fds=(w,))
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    code_err = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(code_err), os.fdopen(r, "rb", 0))
    assert proc.stdout is not None and proc.stderr is not None
    moat_err = asyncio.ensure_future(_read_all(proc.stderr, None))
    try:
        out, err = await asyncio.wait_for(
            asyncio.gather(_read_all(proc.stdout, on_stdout), _read_all(code_err, on_stderr)),
            deadline_s)
        status = await asyncio.wait_for(proc.wait(), max(1.0, deadline_s))
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        moat_err.cancel()
        raise MoatTimeout("moat did not finish in %gs: killed" % deadline_s, None, "") from None
    finally:
        transport.close()
    return status, out, err, await moat_err


async def _simple(argv: List[str], deadline_s: float) -> bytes:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), deadline_s)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise MoatTimeout("moat did not finish in %gs: killed" % deadline_s, None, "") from None
    if proc.returncode != 0:
        raise fail(proc.returncode, err)
    return out


async def arun(cmd: Command, *, moat: Optional[str] = None, root: Optional[str] = None,
               profile: Optional[str] = None, config: Optional[str] = None,
               input: Union[None, str, bytes] = None, on_stdout: Optional[Callback] = None,
               on_stderr: Optional[Callback] = None, moat_timeout: Optional[float] = None,
               **options: object) -> Record:
    """run(), awaitable."""
    with tempfile.TemporaryDirectory(prefix="moat-sandbox-") as tmp:
        result = os.path.join(tmp, "record.json")
        _with_input(tmp, input, options)
        head = ([moat_binary(moat)] + global_flags(root, profile, config)
                + ["sandbox", "--result", result] + option_flags(options, SANDBOX_OPTIONS, "arun"))
        status, out, err, moat_err = await _drive(
            head, ["--"] + command_argv(cmd),
            moat_deadline(options.get("timeout"), moat_timeout),  # type: ignore[arg-type]
            on_stdout, on_stderr)
        return finish_record(result, status, out, err, moat_err)


class AsyncSession(SessionBase):
    """Session, awaitable: `async with AsyncSession(rootfs=...) as s:
    rec = await s.exec("...")`."""

    _code_lock: Optional[asyncio.Lock] = None

    async def create(self) -> str:
        out = await _simple(self._create_argv(), self._moat_timeout)
        sid: str = json.loads(out)["id"]
        self.id = sid
        return sid

    async def exec(self, cmd: Command, *, input: Union[None, str, bytes] = None,
                   on_stdout: Optional[Callback] = None, on_stderr: Optional[Callback] = None,
                   moat_timeout: Optional[float] = None, **options: object) -> Record:
        with tempfile.TemporaryDirectory(prefix="moat-session-") as tmp:
            result = os.path.join(tmp, "record.json")
            _with_input(tmp, input, options)
            head, tail = self._exec_argv(result, cmd, options)
            status, out, err, moat_err = await _drive(
                head, tail,
                moat_deadline(options.get("timeout"), moat_timeout),  # type: ignore[arg-type]
                on_stdout, on_stderr)
            return finish_record(result, status, out, err, moat_err)

    async def put(self, host_path: str, dest: str) -> None:
        await _simple(self._argv("put", str(self.id), host_path, dest), self._moat_timeout)

    async def get(self, src: str, host_path: str) -> None:
        await _simple(self._argv("get", str(self.id), src, host_path), self._moat_timeout)

    async def run_code(self, code: str, *, timeout: Union[None, int, float, str] = None,
                       output_limit: int = DEFAULT_CELL_OUTPUT_LIMIT) -> Record:
        """As Session.run_code; the interpreter's pipe is read in a worker
        thread, and cells of one session run one at a time."""
        interpreter, sid = self._code_interpreter()
        if self._code_lock is None:
            self._code_lock = asyncio.Lock()
        async with self._code_lock:
            return await asyncio.get_running_loop().run_in_executor(
                None, interpreter.run, self._argv("exec"), sid, code, timeout, output_limit)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._drop_interpreter)
        if self.id is not None:
            await _simple(self._argv("rm", self.id), self._moat_timeout)
            self.id = None

    async def __aenter__(self) -> "AsyncSession":
        await self.create()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
