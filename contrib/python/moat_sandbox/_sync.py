"""The synchronous API: run() and Session."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import tempfile
import time
from typing import Dict, List, Optional, Tuple, Union

from ._code import DEFAULT_CELL_OUTPUT_LIMIT
from ._core import (SANDBOX_OPTIONS, Callback, Command, MoatTimeout, Record, SessionBase,
                    command_argv, fail, finish_record, global_flags, moat_binary,
                    moat_deadline, option_flags)

Streams = Tuple[int, bytes, bytes, bytes]  # status, stdout, code's stderr, moat's


def _drive(head: List[str], tail: List[str], deadline_s: float,
           on_stdout: Optional[Callback], on_stderr: Optional[Callback]) -> Streams:
    """Run moat (head + --stderr-fd N + tail). Its stdout and the code's
    stderr (fd N) go to the callbacks as they come; moat's own stderr is
    kept apart. Past deadline_s moat is killed (its watchdog cleans up)."""
    r, w = os.pipe()
    try:
        proc = subprocess.Popen(head + ["--stderr-fd", str(w)] + tail, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w,))
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, moat_fd = proc.stdout.fileno(), proc.stderr.fileno()
    chunks: Dict[int, List[bytes]] = {out_fd: [], r: [], moat_fd: []}
    callbacks = {out_fd: on_stdout, r: on_stderr}
    sel = selectors.DefaultSelector()
    for fd in chunks:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    end = time.monotonic() + deadline_s
    try:
        while sel.get_map():
            left = end - time.monotonic()
            if left <= 0:
                proc.kill()
                proc.wait()
                raise MoatTimeout("moat did not finish in %gs: killed" % deadline_s, None,
                                  b"".join(chunks[moat_fd]).decode(errors="replace"))
            for key, _ in sel.select(min(left, 1.0)):
                try:
                    data = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fd)
                    continue
                chunks[key.fd].append(data)
                callback = callbacks.get(key.fd)
                if callback:
                    callback(data)
        status = proc.wait()
    finally:
        sel.close()
        os.close(r)
        proc.stdout.close()
        proc.stderr.close()
    return status, b"".join(chunks[out_fd]), b"".join(chunks[r]), b"".join(chunks[moat_fd])


def _simple(argv: List[str], deadline_s: float) -> bytes:
    """A verb without streaming: its stdout, or MoatError."""
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=deadline_s)
    except subprocess.TimeoutExpired as e:
        raise MoatTimeout("moat did not finish in %gs: killed" % deadline_s, None,
                          (e.stderr or b"").decode(errors="replace")) from None
    if proc.returncode != 0:
        raise fail(proc.returncode, proc.stderr)
    return proc.stdout


def _with_input(tmp: str, input: Union[None, str, bytes], options: Dict[str, object]) -> None:
    if input is not None:
        path = os.path.join(tmp, "stdin")
        with open(path, "wb") as f:
            f.write(input.encode() if isinstance(input, str) else input)
        options["stdin"] = path


def run(cmd: Command, *, moat: Optional[str] = None, root: Optional[str] = None,
        profile: Optional[str] = None, config: Optional[str] = None,
        input: Union[None, str, bytes] = None, on_stdout: Optional[Callback] = None,
        on_stderr: Optional[Callback] = None, moat_timeout: Optional[float] = None,
        **options: object) -> Record:
    """Run cmd (a list, or a string for /bin/sh -c) in a throw-away sandbox.

    Options mirror `moat sandbox`'s flags: rootfs, image, host_usr (True:
    the host's /usr, no image), workdir, ro_bind
    ({src: dst} or ["SRC:DST"]), env ({k: v} or ["K=V"]), stdin (a file),
    timeout ("10s"), output_limit ("1m"), memory ("256m"), pids, cpus, user.
    input: bytes for stdin. on_stdout/on_stderr: called with each chunk of
    the code's output as it comes. moat_timeout: seconds moat itself may
    take (default: the deadline plus 30 s). Returns moat's record plus
    stdout_text, stderr_text and moat_messages (moat's own lines); raises
    MoatError when moat failed (no record), MoatTimeout past moat_timeout.
    """
    with tempfile.TemporaryDirectory(prefix="moat-sandbox-") as tmp:
        result = os.path.join(tmp, "record.json")
        _with_input(tmp, input, options)
        head = ([moat_binary(moat)] + global_flags(root, profile, config)
                + ["sandbox", "--result", result] + option_flags(options, SANDBOX_OPTIONS, "run"))
        status, out, err, moat_err = _drive(head, ["--"] + command_argv(cmd),
                                            moat_deadline(options.get("timeout"), moat_timeout),  # type: ignore[arg-type]
                                            on_stdout, on_stderr)
        return finish_record(result, status, out, err, moat_err)


class Session(SessionBase):
    """A sandbox that stays: `with Session(rootfs=...) as s: s.exec("...")`.

    Options as run()'s (no timeout, output_limit or stdin: those are each
    exec's), plus idle_timeout and max_lifetime ("30m"). The session is
    removed on leaving the with block (or close()).
    """

    def create(self) -> str:
        out = _simple(self._create_argv(), self._moat_timeout)
        sid: str = json.loads(out)["id"]
        self.id = sid
        return sid

    def exec(self, cmd: Command, *, input: Union[None, str, bytes] = None,
             on_stdout: Optional[Callback] = None, on_stderr: Optional[Callback] = None,
             moat_timeout: Optional[float] = None, **options: object) -> Record:
        """One command: options env, cwd, user, timeout, output_limit, stdin."""
        with tempfile.TemporaryDirectory(prefix="moat-session-") as tmp:
            result = os.path.join(tmp, "record.json")
            _with_input(tmp, input, options)
            head, tail = self._exec_argv(result, cmd, options)
            status, out, err, moat_err = _drive(head, tail,
                                                moat_deadline(options.get("timeout"), moat_timeout),  # type: ignore[arg-type]
                                                on_stdout, on_stderr)
            return finish_record(result, status, out, err, moat_err)

    def put(self, host_path: str, dest: str) -> None:
        """Copy a file or tree in (dest: an existing directory receives it)."""
        _simple(self._argv("put", str(self.id), host_path, dest), self._moat_timeout)

    def get(self, src: str, host_path: str) -> None:
        """Copy a file or tree out (symlinks are skipped, never followed)."""
        _simple(self._argv("get", str(self.id), src, host_path), self._moat_timeout)

    def run_code(self, code: str, *, timeout: Union[None, int, float, str] = None,
                 output_limit: int = DEFAULT_CELL_OUTPUT_LIMIT) -> Record:
        """A Python cell in the session's interpreter (python3 in the
        session), which keeps its state from cell to cell. Record: "value"
        (repr of the last expression, or None), "error" (name, value,
        traceback, or None), "stdout_text", "stderr_text" and their
        "_dropped" byte counts past output_limit, "timed_out" (the cell ran
        past timeout, default 60 s: the interpreter was killed, its state
        is gone), "interpreter_died", "fresh" (this cell started a new
        interpreter)."""
        interpreter, sid = self._code_interpreter()
        return interpreter.run(self._argv("exec"), sid, code, timeout, output_limit)

    def close(self) -> None:
        self._drop_interpreter()
        if self.id is not None:
            _simple(self._argv("rm", self.id), self._moat_timeout)
            self.id = None

    def __enter__(self) -> "Session":
        self.create()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def list_sessions(*, moat: Optional[str] = None, root: Optional[str] = None,
                  config: Optional[str] = None, moat_timeout: float = 60.0) -> List[Record]:
    """`moat session list --json`."""
    argv = [moat_binary(moat)] + global_flags(root, None, config) + ["session", "list", "--json"]
    sessions: List[Record] = json.loads(_simple(argv, moat_timeout))
    return sessions
