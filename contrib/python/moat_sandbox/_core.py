"""What the sync and asyncio front ends share: the moat binary, the argv of
each verb, durations, and turning moat's output into a record."""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._code import CodeInterpreter

Command = Union[str, Sequence[str]]
Callback = Callable[[bytes], None]
Record = Dict[str, Any]

# moat's own default deadline (moat(1)); moat itself gets this much more.
MOAT_DEFAULT_TIMEOUT_S = 600.0
MOAT_GRACE_S = 30.0


class MoatError(RuntimeError):
    """moat could not do what was asked (its own error, not the code's)."""

    def __init__(self, message: str, returncode: Optional[int], stderr: str):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class MoatTimeout(MoatError):
    """moat itself did not finish in time and was killed (its watchdog
    removes what it made)."""


def moat_binary(moat: Optional[str]) -> str:
    """The binary, resolved now (not at import): moat=, $MOAT, PATH."""
    if moat:
        return moat
    env = os.environ.get("MOAT")
    if env:
        return env
    return shutil.which("moat") or "moat"


def parse_duration(value: Union[None, int, float, str]) -> Optional[float]:
    """'500ms', '10s', '2m', '1h', or a number of seconds -> seconds."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s|m|h)?\s*", value)
    if not m:
        raise ValueError("not a duration: %r" % value)
    mult = {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0}[m.group(2)]
    return float(m.group(1)) * mult


def moat_deadline(timeout: Union[None, int, float, str], moat_timeout: Optional[float]) -> float:
    """How long moat itself may take: given, or the command's deadline plus
    a grace for moat's own work."""
    if moat_timeout is not None:
        return float(moat_timeout)
    try:
        t = parse_duration(timeout)
    except ValueError:
        t = None  # moat refuses it, in its own words
    return (t if t is not None else MOAT_DEFAULT_TIMEOUT_S) + MOAT_GRACE_S


def global_flags(root: Optional[str], profile: Optional[str], config: Optional[str]) -> List[str]:
    flags: List[str] = []
    if root:
        flags += ["--root", root]
    if profile:
        flags += ["--profile", profile]
    if config:
        flags += ["--config", config]
    return flags


def _pairs(value: Union[Mapping[str, str], Iterable[str]], sep: str) -> List[str]:
    if isinstance(value, Mapping):
        return ["%s%s%s" % (k, sep, v) for k, v in value.items()]
    return [str(v) for v in value]


_VALUE_FLAGS = {
    "rootfs": "--rootfs",
    "image": "--image",
    "workdir": "--workdir",
    "stdin": "--stdin",
    "timeout": "--timeout",
    "output_limit": "--output-limit",
    "memory": "--memory",
    "pids": "--pids",
    "cpus": "--cpus",
    "user": "--user",
    "cwd": "--cwd",
    "idle_timeout": "--idle-timeout",
    "max_lifetime": "--max-lifetime",
}


def option_flags(options: Mapping[str, Any], allowed: Iterable[str], what: str) -> List[str]:
    """Keyword options -> flags; an unknown one is a TypeError."""
    allowed = set(allowed)
    argv: List[str] = []
    for key, value in options.items():
        if value is None:
            continue
        if key not in allowed:
            raise TypeError("%s() got an unknown option %r" % (what, key))
        if key == "env":
            for item in _pairs(value, "="):
                argv += ["--env", item]
        elif key == "ro_bind":
            for item in _pairs(value, ":"):
                argv += ["--ro-bind", item]
        elif key == "host_usr":
            argv += ["--host-usr"] if value else []
        else:
            argv += [_VALUE_FLAGS[key], str(value)]
    return argv


SANDBOX_OPTIONS = ("rootfs", "image", "host_usr", "workdir", "ro_bind", "env", "stdin", "timeout",
                   "output_limit", "memory", "pids", "cpus", "user")
CREATE_OPTIONS = ("rootfs", "image", "host_usr", "workdir", "ro_bind", "env", "memory", "pids", "cpus",
                  "user", "idle_timeout", "max_lifetime")
EXEC_OPTIONS = ("env", "stdin", "timeout", "output_limit", "cwd", "user")


def command_argv(cmd: Command) -> List[str]:
    if isinstance(cmd, str):
        return ["/bin/sh", "-c", cmd]
    return list(cmd)


def moat_lines(stderr: bytes) -> List[str]:
    return [l for l in stderr.decode(errors="replace").splitlines() if l.strip()]


def fail(returncode: Optional[int], stderr: bytes) -> MoatError:
    lines = moat_lines(stderr)
    ours = [l for l in lines if l.startswith("moat:")]
    return MoatError(ours[-1] if ours else (lines[-1] if lines else "moat failed"),
                     returncode, "\n".join(lines))


def finish_record(result_path: str, returncode: Optional[int], out: bytes, code_err: bytes,
                  moat_err: bytes) -> Record:
    """The record moat wrote, plus the output as text and moat's own lines
    (warnings, the deadline or OOM line) apart from the code's stderr."""
    try:
        with open(result_path) as f:
            record: Record = json.load(f)
    except (OSError, ValueError):
        raise fail(returncode, moat_err) from None
    record["stdout_text"] = out.decode(errors="replace")
    record["stderr_text"] = code_err.decode(errors="replace")
    record["moat_messages"] = moat_lines(moat_err)
    return record


class SessionBase:
    """What Session and AsyncSession share: their options and each verb's
    argv."""

    def __init__(self, *, moat: Optional[str] = None, root: Optional[str] = None,
                 profile: Optional[str] = None, config: Optional[str] = None,
                 moat_timeout: float = 120.0, **options: object):
        option_flags(options, CREATE_OPTIONS, type(self).__name__)  # unknown options fail here
        self._moat, self._globals = moat, global_flags(root, profile, config)
        self._options = options
        self._moat_timeout = moat_timeout
        self._interpreter: Optional[CodeInterpreter] = None
        self.id: Optional[str] = None

    def _argv(self, *verb: str) -> List[str]:
        return [moat_binary(self._moat)] + self._globals + ["session"] + list(verb)

    def _code_interpreter(self) -> Tuple[CodeInterpreter, str]:
        """run_code's interpreter (made on first use) and the session id."""
        if self.id is None:
            raise RuntimeError("the session is not created (use with, or create())")
        if self._interpreter is None:
            self._interpreter = CodeInterpreter()
        return self._interpreter, self.id

    def _drop_interpreter(self) -> None:
        interpreter, self._interpreter = self._interpreter, None
        if interpreter is not None:
            interpreter.stop()

    def _create_argv(self) -> List[str]:
        return self._argv("create", "--json") + option_flags(self._options, CREATE_OPTIONS,
                                                              type(self).__name__)

    def _exec_argv(self, result: str, cmd: Command,
                   options: Mapping[str, Any]) -> Tuple[List[str], List[str]]:
        """(flags, ID -- CMD): moat's --stderr-fd goes between them."""
        if self.id is None:
            raise RuntimeError("the session is not created (use with, or create())")
        return (self._argv("exec", "--result", result) + option_flags(options, EXEC_OPTIONS, "exec"),
                [self.id, "--"] + command_argv(cmd))
