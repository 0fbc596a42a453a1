"""Run untrusted code with moat: one-shot sandboxes and sessions that stay,
sync or asyncio. No dependency beyond the standard library.

    from moat_sandbox import run, Session
    rec = run(["python3", "-c", "print(2 + 2)"], image="/srv/images/python", timeout="10s")
    print(rec["exit_code"], rec["stdout_text"])

    with Session(rootfs="/srv/rootfs") as s:
        s.exec("echo 1 >/tmp/x")
        print(s.exec("cat /tmp/x")["stdout_text"])

The moat binary is resolved at each call: moat=, else $MOAT, else PATH.
Records are moat's (see `moat sandbox --help`) plus "stdout_text",
"stderr_text" (the code's output that passed the output limit, as UTF-8
with replacement) and "moat_messages" (moat's own warnings, never mixed into
the code's stderr). MoatError: moat itself failed; MoatTimeout: moat did not
finish within moat_timeout and was killed.
"""

from ._async import AsyncSession, arun
from ._core import MoatError, MoatTimeout, Record, moat_binary, parse_duration
from ._sync import Session, list_sessions, run

__all__ = ["run", "arun", "Session", "AsyncSession", "list_sessions", "MoatError",
           "MoatTimeout", "Record", "moat_binary", "parse_duration"]
