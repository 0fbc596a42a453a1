"""Run untrusted code with `moat sandbox` and get its result record.

    from moat_sandbox import run
    rec = run(["python3", "-c", "print(2 + 2)"], image="/srv/images/python", timeout="10s")
    print(rec["exit_code"], rec["stdout_text"])

No dependencies beyond the standard library. run() returns the record moat
writes (see `moat sandbox --help` and the README), plus "stdout_text" and
"stderr_text": the output that passed the --output-limit, decoded as UTF-8
with replacement. It raises MoatError when moat itself failed (bad option,
refused bind, missing image): then there is no record.
"""

import json
import os
import subprocess
import tempfile

__all__ = ["run", "MoatError"]

MOAT = os.environ.get("MOAT", "moat")


class MoatError(RuntimeError):
    """moat could not run the sandbox (its own error, not the code's)."""

    def __init__(self, message, returncode, stderr):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


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
}


def _argv(cmd, options, result_path, moat, global_flags):
    argv = [moat] + list(global_flags) + ["sandbox", "--result", result_path]
    for key, value in options.items():
        if value is None:
            continue
        if key in _VALUE_FLAGS:
            argv += [_VALUE_FLAGS[key], str(value)]
        elif key == "env":
            items = value.items() if isinstance(value, dict) else value
            for item in items:
                argv += ["--env", item if isinstance(item, str) else "%s=%s" % item]
        elif key == "ro_bind":
            items = value.items() if isinstance(value, dict) else value
            for item in items:
                argv += ["--ro-bind", item if isinstance(item, str) else "%s:%s" % item]
        else:
            raise TypeError("run() got an unknown option %r" % key)
    if isinstance(cmd, str):
        cmd = ["/bin/sh", "-c", cmd]
    return argv + ["--"] + list(cmd)


def run(cmd, *, moat=None, root=None, profile=None, config=None, input=None, **options):
    """Run cmd (a list, or a string for /bin/sh -c) in a sandbox.

    Options mirror the flags: rootfs, image, workdir, ro_bind ({src: dst}
    or ["SRC:DST"]), env ({k: v} or ["K=V"]), stdin (a file), timeout
    ("10s"), output_limit ("1m"), memory ("256m"), pids, cpus. input:
    bytes to feed as stdin (written to a temporary file). moat, root,
    profile, config: the moat binary and its global flags.
    """
    global_flags = []
    if root:
        global_flags += ["--root", root]
    if profile:
        global_flags += ["--profile", profile]
    if config:
        global_flags += ["--config", config]
    with tempfile.TemporaryDirectory(prefix="moat-sandbox-") as tmp:
        result_path = os.path.join(tmp, "record.json")
        if input is not None:
            stdin_path = os.path.join(tmp, "stdin")
            with open(stdin_path, "wb") as f:
                f.write(input.encode() if isinstance(input, str) else input)
            options["stdin"] = stdin_path
        argv = _argv(cmd, options, result_path, moat or MOAT, global_flags)
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        try:
            with open(result_path) as f:
                record = json.load(f)
        except (OSError, ValueError):
            err = proc.stderr.decode(errors="replace").strip()
            lines = [line for line in err.splitlines() if line.startswith("moat:")]
            raise MoatError(lines[-1] if lines else err or "moat failed",
                            proc.returncode, err) from None
    record["stdout_text"] = proc.stdout.decode(errors="replace")
    record["stderr_text"] = proc.stderr.decode(errors="replace")
    return record
