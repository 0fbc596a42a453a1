"""Session.run_code: Python cells in one interpreter that lives in the
session, as e2b's code interpreter does: what a cell defines (variables,
imports, functions) is there for the next one.

The interpreter is `python3` inside the session (an image with Python, or
host_usr=True), started by the first cell with `moat session exec` and kept
on a pipe: each cell is one JSON line in, one JSON line out. Its output
goes to a file of its own per cell (fd 1 and 2, so that a subprocess's
output is caught too), read back up to the cell's output_limit. A cell that
overruns its deadline has its interpreter killed (moat kills its whole
process tree); the next cell starts a fresh one, whose result says
"fresh": True, and the state of the old one is gone.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from typing import IO, Any, Dict, List, Optional, Union

Record = Dict[str, Any]  # as _core's (which imports this module)

DEFAULT_CELL_TIMEOUT_S = 60.0
DEFAULT_CELL_OUTPUT_LIMIT = 1 << 20

# The interpreter's side. It reads requests on fd 0 and answers on a copy
# of fd 1 made before the cells' output is sent elsewhere.
_SERVER = r'''
import ast, json, os, sys, traceback
requests = os.fdopen(os.dup(0), "r")
answers = os.fdopen(os.dup(1), "w")
os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
scope = {"__name__": "__main__", "__builtins__": __builtins__}
for line in requests:
    req = json.loads(line)
    limit = req["output_limit"]
    files = []
    for fd in (1, 2):
        f = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
        os.dup2(f, fd)
        files.append(f)
    value = error = None
    try:
        tree = ast.parse(req["code"], "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), scope)
        if last is not None:
            v = eval(compile(last, "<cell>", "eval"), scope)
            value = None if v is None else repr(v)
    except BaseException as e:
        error = {"name": type(e).__name__, "value": str(e),
                 "traceback": traceback.format_exc()}
    sys.stdout.flush()
    sys.stderr.flush()
    answer = {"value": value, "error": error}
    for name, f in zip(("stdout", "stderr"), files):
        size = os.lseek(f, 0, os.SEEK_END)
        answer[name + "_text"] = os.pread(f, limit, 0).decode(errors="replace")
        answer[name + "_dropped"] = max(0, size - limit)
        os.close(f)
    answers.write(json.dumps(answer) + "\n")
    answers.flush()
'''


class CodeInterpreter:
    """One interpreter process (`moat session exec ... python3`) and its
    pipes; started on demand, killed on a deadline or by close()."""

    def __init__(self) -> None:
        self._proc: Optional[subprocess.Popen[bytes]] = None

    def _start(self, head: List[str], session_id: str) -> None:
        # moat's own deadline and cap would end the interpreter: the cells
        # have theirs. Its stderr is moat's alone (the cells' goes to files).
        # Requests reach it through moat's stdin, passed on ("-": a pipe;
        # moat follows no link such as /dev/stdin on the host side).
        argv = head + ["--timeout", "24h", "--output-limit", "1g", "--stdin", "-",
                       session_id, "--", "python3", "-u", "-c", _SERVER]
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE)

    def stop(self) -> str:
        """Kill it (moat kills its tree); moat's messages."""
        proc, self._proc = self._proc, None
        if proc is None:
            return ""
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        return err.decode(errors="replace")

    def run(self, head: List[str], session_id: str, code: str,
            timeout: Union[None, int, float, str], output_limit: int) -> Record:
        fresh = self._proc is None
        if self._proc is None:
            self._start(head, session_id)
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        from ._core import parse_duration  # _core imports this module
        deadline = parse_duration(timeout)
        limit_s = DEFAULT_CELL_TIMEOUT_S if deadline is None else deadline
        request = json.dumps({"code": code, "output_limit": output_limit}) + "\n"
        try:
            proc.stdin.write(request.encode())
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # it died: told below
        line = _read_line(proc.stdout, time.monotonic() + limit_s)
        if line is None or not line.endswith(b"\n"):
            timed_out = line is None
            messages = self.stop()
            return {"value": None, "error": None, "stdout_text": "", "stderr_text": "",
                    "stdout_dropped": 0, "stderr_dropped": 0, "timed_out": timed_out,
                    "interpreter_died": not timed_out, "fresh": fresh,
                    "moat_messages": [m for m in messages.splitlines() if m]}
        record: Record = json.loads(line)
        record.update(timed_out=False, interpreter_died=False, fresh=fresh, moat_messages=[])
        return record


def _read_line(stream: IO[bytes], end: float) -> Optional[bytes]:
    """One line, or what came before EOF; None at the deadline."""
    fd = stream.fileno()
    chunks: List[bytes] = []
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            if not sel.select(min(left, 1.0)):
                continue
            data = os.read(fd, 65536)
            chunks.append(data)
            if not data or data.endswith(b"\n"):
                return b"".join(chunks)
