#!/usr/bin/env python3
"""The layers of the tree, checked on the sources (includes) and on the built
objects (calls), for every folder: the table below says which folder may use
which, and the table has no cycle. And the walk from `moat exec` to the process's execve never enters
policy/: later verbs obey the decision create saved and never judge again.

Usage: tests/layers.py [BUILD]   (run from anywhere; BUILD defaults to build)
The objects must be compiled with -ffunction-sections -fdata-sections (the
Makefile does): the call check follows the relocations of each function's
own section, so it sees which function calls which.
"""
import os
import re
import subprocess
import sys
from collections import deque

# FOLDER: the folders it may include and call (itself included). A file
# belongs to the longest folder listed that holds it, so a sub-folder
# (runtime/cgroup: lib oci runtime/cgroup) is one more line.
LAYERS = """
lib:              lib
oci:              lib oci
policy:           lib oci policy
hooks:            lib oci hooks
runtime/log:      lib oci runtime/log
runtime/bpf:      lib runtime/bpf
runtime/cgroup:   lib oci runtime/cgroup runtime/bpf
runtime/seccomp:  lib oci policy runtime/seccomp
runtime/netguard: lib oci policy runtime/netguard runtime/bpf
runtime/init:     lib oci policy hooks runtime/log runtime/init runtime/cgroup runtime/netguard runtime/seccomp
runtime/userns:   lib oci policy runtime/userns runtime/cgroup runtime/init
runtime:          lib oci policy hooks runtime runtime/log runtime/bpf runtime/cgroup runtime/init runtime/netguard runtime/seccomp runtime/userns
app:              lib oci policy runtime runtime/cgroup runtime/init runtime/seccomp app
cmd:              lib oci policy hooks runtime runtime/log runtime/cgroup runtime/init runtime/seccomp runtime/userns app cmd
"""

# Functions whose every callee (for exec: down to the process's execve)
# stays out of a folder: these verbs act on a container create made, obey
# the decision it saved (oci/decision.c) and never call the policy.
WALKS = [("cmd_" + verb, "policy") for verb in (
    "exec", "update", "delete", "events", "start", "state", "kill", "ps",
    "pause", "resume", "list")]

# Functions only one folder may call: the verdicts recorded on the hardened
# spec (Landlock's, the seccomp level) are the policy's; the runtime reads
# them back and applies them, and never writes one. Overrides too are the
# policy's judgement, but for the objects listed with them.
OVERRIDES_ELSEWHERE = (
    # The bounds the policy decides, which exec and update apply under the
    # saved decision (each verb's clamps, on its audit line).
    "oci/process_bounds.o", "oci/resource_bounds.o",
    # The sandbox's clamps of its caller's flags (before create judges),
    # and its copy of a run's overrides into its record.
    "app/sandbox_config.o", "app/sandbox_run.o",
    # What the host has no cgroup file for (a blkio weight without BFQ),
    # found by the back-ends as they write, create's and update's alike,
    # and left alone: on the verb's audit line, told on stderr.
    "runtime/cgroup/cgroup.o")
# No runtime object records an override: create gathers the facts (kernel
# probes, what can be idmapped, the adopted user namespace ...) and the
# policy records what it made of them; the runtime applies the decision.
ONLY_FROM = [("spec_set_annotation", "policy", ()),
             ("override_list_add", "policy", OVERRIDES_ELSEWHERE)]

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def parse_table():
    table = {}
    for line in LAYERS.strip().splitlines():
        folder, uses = line.split(":", 1)
        table[folder.strip()] = set(uses.split())
    return table


def check_cycles(table):
    """The table itself: no folder may reach itself through the others
    (a cycle makes two rooms one). Returns each cycle found, once."""
    bad = []
    state = {}  # folder -> 1 on the current path, 2 done

    def visit(folder, path):
        state[folder] = 1
        for used in sorted(table[folder] - {folder}):
            if state.get(used) == 1:
                loop = path[path.index(used):] + [used]
                bad.append("the table has a cycle: " + " -> ".join(loop))
            elif used in table and used not in state:
                visit(used, path + [used])
        state[folder] = 2

    for folder in sorted(table):
        if folder not in state:
            visit(folder, [folder])
    return bad


def owner(path, table):
    """The longest folder of the table holding path (None: not ours)."""
    best = None
    for folder in table:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def check_includes(table):
    bad = []
    for top in sorted({f.split("/")[0] for f in table}):
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                src = os.path.join(dirpath, name)
                mine = owner(dirpath, table)
                with open(src, encoding="utf-8") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    target = os.path.normpath(os.path.join(dirpath, inc))
                    theirs = owner(os.path.dirname(target), table)
                    if theirs and theirs not in table[mine]:
                        bad.append(f"{src} includes {inc} ({theirs}/ is not "
                                   f"for {mine}/)")
    return bad


def readelf(args, obj):
    return subprocess.run(["readelf", "-W"] + args + [obj], check=True,
                          capture_output=True, text=True).stdout


class Obj:
    """One object: its sections, symbols and, per section, what it uses."""

    def __init__(self, path):
        self.path = path
        self.sections = {}  # index -> name
        for m in re.finditer(r"^\s*\[\s*(\d+)\]\s+(\S+)", readelf(["-S"], path),
                             re.M):
            self.sections[int(m.group(1))] = m.group(2)
        self.section_index = {n: i for i, n in self.sections.items()}
        self.defined = {}  # global symbol -> section index
        self.local = {}  # local symbol -> section index
        self.undefined = set()
        for line in readelf(["-s"], path).splitlines():
            f = line.split()
            if len(f) < 8 or not f[0].endswith(":"):
                continue
            kind, bind, ndx, name = f[3], f[4], f[6], f[7]
            if ndx == "UND":
                if name:
                    self.undefined.add(name)
            elif ndx.isdigit() and kind in ("FUNC", "OBJECT", "NOTYPE"):
                if bind in ("GLOBAL", "WEAK"):
                    self.defined[name] = int(ndx)
                else:
                    self.local[name] = int(ndx)
        self.uses = {}  # section index -> names it references
        current = None
        for line in readelf(["-r"], path).splitlines():
            m = re.match(r"Relocation section '\.rela?(\S+)'", line)
            if m:
                target = m.group(1)
                current = None
                if target.startswith((".text", ".data", ".rodata")):
                    current = self.uses.setdefault(
                        self.section_index.get(target, -1), set())
                continue
            f = line.split()
            if current is not None and len(f) >= 5 and re.match(
                    r"^[0-9a-f]+$", f[0]):
                current.add(f[4])


def load_objects(build, table):
    """The objects of the sources there are: one left in BUILD by a source
    since moved or removed is not read (it would be checked as if it were
    still in its old folder)."""
    objs = {}
    for folder in table:
        d = os.path.join(build, folder)
        for dirpath, _, files in os.walk(d):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                source = os.path.relpath(path, build)[:-2] + ".c"
                # A sub-folder's objects are met again under its parent.
                if (name.endswith(".o") and path not in objs
                        and os.path.exists(source)):
                    objs[path] = Obj(path)
    return list(objs.values())


def source_folder(obj, build, table):
    rel = os.path.relpath(os.path.dirname(obj.path), build)
    return owner(rel, table)


def check_calls(objs, build, table):
    where = {}
    for o in objs:
        for sym in o.defined:
            where[sym] = source_folder(o, build, table)
    bad = []
    for o in objs:
        mine = source_folder(o, build, table)
        for sym in sorted(o.undefined):
            theirs = where.get(sym)
            if theirs and theirs not in table[mine]:
                bad.append(f"{o.path} calls {sym} ({theirs}/ is not for "
                           f"{mine}/)")
    return bad


def check_only_from(objs, build, table):
    bad = []
    for sym, folder, allowed in ONLY_FROM:
        for o in objs:
            mine = source_folder(o, build, table)
            if os.path.relpath(o.path, build) in allowed:
                continue
            if sym in o.undefined and mine != folder:
                bad.append(f"{o.path} calls {sym} (only {folder}/ may)")
    return bad


def check_walks(objs, build, table):
    defined = {}
    for o in objs:
        for sym, sec in o.defined.items():
            defined[sym] = (o, sec)
    bad = []
    for root, forbidden in WALKS:
        if root not in defined:
            bad.append(f"{root}: not found in the objects")
            continue
        start = (defined[root][0].path, defined[root][1])
        by_path = {o.path: o for o in objs}
        came_from = {start: None}
        names = {start: root}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            o = by_path[node[0]]
            folder = source_folder(o, build, table)
            if folder == forbidden:
                chain = []
                while node:
                    chain.append(names[node])
                    node = came_from[node]
                bad.append(f"the walk from {root} enters {forbidden}/: "
                           + " -> ".join(reversed(chain)) + f" ({o.path})")
                break
            for ref in o.uses.get(node[1], ()):
                ref = ref.split("+")[0]
                if ref in o.local:
                    nxt = (o.path, o.local[ref])
                elif ref in defined:
                    nxt = (defined[ref][0].path, defined[ref][1])
                elif ref in o.section_index:
                    nxt = (o.path, o.section_index[ref])
                else:
                    continue  # a library's (libc, libseccomp ...)
                if nxt not in came_from:
                    came_from[nxt] = node
                    names[nxt] = ref
                    queue.append(nxt)
    return bad


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    table = parse_table()
    objs = load_objects(build, table)
    bad = check_cycles(table)
    bad += check_includes(table) + check_calls(objs, build, table)
    bad += check_only_from(objs, build, table)
    bad += check_walks(objs, build, table)
    for line in bad:
        print("layers: " + line)
    if bad:
        return 1
    print("layers: the table has no cycle; every folder includes and calls "
          "only what the table allows; only policy/ records verdicts and (but for " + str(len(OVERRIDES_ELSEWHERE)) + " listed objects) overrides; " + ", ".join(r for r, _ in WALKS) + " never enter policy/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
