#!/bin/bash
# A runtime wrapper for debugging and for tests that check how an engine
# calls moat: appends "ARGV pid ppid-comm cwd argv..." and, when moat returns,
# "EXIT pid status" to @LOG@, then runs @MOAT@ with the same arguments and
# stdio (the container inherits them). setup.sh installs a copy named "moat"
# (podman keys runtime features on the basename) with @LOG@ and @MOAT@ filled.
log=@LOG@
real=@MOAT@
{
	printf 'ARGV %s %s %s' "$$" "$(cat /proc/$PPID/comm 2>/dev/null)" "$PWD"
	printf ' %q' "$@"
	printf '\n'
} >>"$log"
# update --resources - : keep a copy of the JSON the engine sent.
if [[ " $* " == *" --resources - "* || " $* " == *" --resources=- "* || " $* " == *" -r - "* ]]; then
	copy="$(dirname "$log")/update-stdin.$$.json"
	cat >"$copy"
	exec <"$copy"
fi
# A background job's stdin would be /dev/null: hand it ours.
exec 3<&0
"$real" "$@" <&3 3<&- &
child=$!
exec 3<&-
for sig in TERM INT HUP QUIT USR1 USR2 WINCH; do
	trap 'kill -'"$sig"' $child 2>/dev/null' "$sig"
done
while :; do
	wait "$child"
	rc=$?
	kill -0 "$child" 2>/dev/null || break
done
printf 'EXIT %s %s\n' "$$" "$rc" >>"$log"
exit "$rc"
