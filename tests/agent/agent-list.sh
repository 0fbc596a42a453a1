#!/bin/sh
# The agent level's table from the traces: every syscall some workload made
# that was not only refused (ENOSYS/EPERM each time: libc fell back), as
# the C lines of runtime/seccomp/seccomp_level.c's agent_syscalls[] (then run
# `make format`). Names outside the default level are dropped there at
# run time, so the agent level can only tighten.
cd "$(dirname "$0")/traces" || exit 1
cat ./*.txt | awk '$2 > $3 { print $1 }' | LC_ALL=C sort -u |
	awk '{ printf "\"%s\", ", $1 } END { print "" }' | fold -s -w 76 | sed 's/^/  /; s/ *$//'
