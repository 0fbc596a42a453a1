#!/usr/bin/env bats
# G11: every verb writes one JSON line to the audit log (the operator
# config's audit_log): time, verb, container id, bundle, profile, and every
# override and refusal the profile made; credential variables by name only.

load profile_helpers

GUARANTEE=g11

setup() {
	requires_root
}

teardown() {
	teardown_profile
}

# create, start, kill, delete of one container: one line for each, in that
# order (state lines from wait_status aside), each complete.
lifecycle_audited() {
	next_id
	update_config '.process.args = ["sleep", "1000"]'
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	moat start "$CID"
	[ "$status" -eq 0 ]
	moat kill "$CID" KILL
	[ "$status" -eq 0 ]
	wait_status "$CID" stopped
	moat delete "$CID"
	[ "$status" -eq 0 ]
	# Every line is one JSON object (jq reads them one by one).
	jq -e . "$AUDIT_LOG" >/dev/null
	[ "$(audit_lines "$CID" | jq -r 'select(.verb != "state") | .verb' | tr '\n' ' ')" = "create start kill delete " ]
	audit_lines "$CID" | jq -s -e --arg b "$BUNDLE" 'all(
		(.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")) and .bundle == $b
		and .profile == "strict" and .result == "ok")' >/dev/null
	[ "$(audit_lines "$CID" | jq -s 'map(select(.verb == "create")) | length')" = 1 ]
}

@test "G11 spec: one line per verb, with time, verb, id, bundle, profile" {
	prepare_bundle spec
	lifecycle_audited
	# What the profile added to a config that asks for little.
	audit_has "$CID" 'select(.verb == "create") | .overrides[] | select(.path == "linux.resources.pids.limit" and .enforced == "64")'
	audit_has "$CID" 'select(.verb == "create") | .overrides[] | select(.path == "mounts[/tmp]" and .kind == "added")'
}

@test "G11 docker.20 (privileged): caps, devices and rw root in the overrides" {
	prepare_bundle docker.20
	lifecycle_audited
	audit_has "$CID" 'select(.verb == "create") | .overrides[] | select(.kind == "removed" and .path == "process.capabilities.bounding" and (.asked | contains("CAP_SYS_ADMIN")) and .enforced == "none")'
	audit_has "$CID" 'select(.verb == "create") | .overrides[] | select(.kind == "changed" and .path == "root.readonly")'
	audit_has "$CID" 'select(.verb == "create") | .overrides[] | select(.kind == "removed" and .path == "linux.devices")'
}

@test "G11 permissive: every override, credential names without their values" {
	prepare_bundle permissive
	lifecycle_audited
	c='select(.verb == "create") | .overrides[]'
	for set in bounding effective inheritable permitted; do
		audit_has "$CID" "$c | select(.kind == \"removed\" and .path == \"process.capabilities.$set\" and .enforced == \"none\")"
	done
	audit_has "$CID" "$c | select(.kind == \"changed\" and .path == \"root.readonly\" and .asked == \"false\" and .enforced == \"true\")"
	audit_has "$CID" "$c | select(.kind == \"changed\" and .path == \"process.noNewPrivileges\")"
	audit_has "$CID" "$c | select(.path == \"linux.namespaces.network\" and .asked == \"host\" and .enforced == \"new\")"
	audit_has "$CID" "$c | select(.path == \"linux.resources.memory.limit\" and .asked == \"68719476736\" and .enforced == \"536870912\")"
	audit_has "$CID" "$c | select(.path == \"linux.sysctl.kernel.core_pattern\" and .kind == \"removed\")"
	for name in AWS_SECRET_ACCESS_KEY GITHUB_TOKEN DB_PASSWORD; do
		audit_has "$CID" "$c | select(.kind == \"removed\" and .path == \"process.env\" and .asked == \"$name\")"
	done
	run grep -c -e x-aws-secret-value -e y-github-token-value -e z-db-password-value "$AUDIT_LOG"
	[ "$output" = 0 ]
	# FOO is no credential: kept, not in the overrides.
	[ "$(audit_lines "$CID" | jq "select(.verb == \"create\") | [.overrides[] | select(.path == \"process.env\" and .asked == \"FOO\")] | length")" = 0 ]
}

@test "G11 a refused create is logged with the refusal" {
	prepare_bundle permissive-raw
	next_id
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[ "$(audit_lines "$CID" | wc -l)" = 1 ]
	audit_has "$CID" 'select(.verb == "create" and .result != "ok" and (.error | contains("docker.sock")))'
	audit_has "$CID" '.overrides[] | select(.kind == "refused" and (.asked | contains("/var/run/docker.sock")))'
	audit_has "$CID" '.overrides[] | select(.kind == "refused" and .asked == "bind /etc")'
}

@test "G11 exec and the egress profile are logged" {
	prepare_bundle spec
	start_sleeper --profile egress
	moat exec --env API_TOKEN=exec-secret-value "$CID" true
	[ "$status" -eq 0 ]
	audit_has "$CID" 'select(.verb == "run" and .profile == "egress")'
	audit_has "$CID" 'select(.verb == "exec" and .result == "ok")'
	run grep -c exec-secret-value "$AUDIT_LOG"
	[ "$output" = 0 ]
}

@test "G11 the audit log cannot be bound into a container" {
	prepare_bundle spec
	mkdir -p "$(dirname "$AUDIT_LOG")"
	touch "$AUDIT_LOG"
	update_config --arg s "$(dirname "$AUDIT_LOG")" '.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind"]}]'
	next_id
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing to bind $(dirname "$AUDIT_LOG")"* ]]
	assert_nothing_left "$CID"
}

@test "G11 a bind through a symlink into /usr is mounted read-only, and the audit line says so" {
	prepare_bundle spec
	mkdir -p "$BUNDLE/host" "$BUNDLE/rootfs/mnt/share"
	ln -s /usr/share "$BUNDLE/host/share-link"
	update_config --arg s "$BUNDLE/host/share-link" \
		'.mounts += [{"destination": "/mnt/share", "type": "bind", "source": $s, "options": ["rbind"]}]'
	# Seen from inside: the mount's own options (nothing is written to the host's /usr).
	in_container 'awk "\$5 == \"/mnt/share\" {print \$6}" /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[[ ",$output," == *",ro,"* ]]
	audit_has "$CID" 'select(.verb == "run") | .overrides[] | select(.kind == "changed" and .path == "mounts[/mnt/share].options" and (.enforced | split(",") | index("ro")))'
}

# Issue 15: read-only verbs drowned the log (330 of 2,136 lines); now they
# are in it only when the operator asks.
@test "G11 read-only verbs are not logged unless audit_read_verbs; acting verbs always are" {
	prepare_bundle spec
	start_sleeper
	moat state "$CID"
	moat list
	moat ps "$CID"
	moat events --stats "$CID"
	moat kill "$CID" 0
	[ "$(audit_lines "$CID" | jq -r .verb | tr '\n' ' ')" = "run kill " ]
	[ "$(jq -r 'select(.verb == "list")' "$AUDIT_LOG")" = "" ]
	printf '{"audit_log": "%s", "audit_read_verbs": true}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	moat state "$CID"
	moat list
	moat ps "$CID"
	[ "$(audit_lines "$CID" | jq -r .verb | tr '\n' ' ')" = "run kill state ps " ]
	[ "$(jq -r 'select(.verb == "list") | .result' "$AUDIT_LOG")" = ok ]
	moat profile show
	[ "$(echo "$output" | jq .audit_read_verbs)" = true ]
}

@test "G11 each line names the caller (uid, pid), refusals are flagged, config.json is digested, run's exit status kept" {
	prepare_bundle spec
	next_id
	update_config '.process.args = ["sh", "-c", "exit 7"] | .annotations = {"run.moat.foo": "x"}'
	moat run -b "$BUNDLE" "$CID"
	[ "$status" -eq 7 ]
	digest="sha256:$(sha256sum "$BUNDLE/config.json" | cut -d' ' -f1)"
	audit_has "$CID" "select(.verb == \"run\" and .exit_status == 7 and .config_digest == \"$digest\" and .uid == 0 and (.pid | type) == \"number\" and .ppid > 1)"
	# An ignored annotation is a refusal: easy to find.
	audit_has "$CID" 'select(.verb == "run" and .refused == true)'
	# A clean create with routine hardening only is not.
	next_id
	update_config '.process.args = ["sleep", "1000"] | del(.annotations)'
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	audit_has "$CID" 'select(.verb == "create" and .refused == false and (.overrides | length) > 0)'
	moat delete --force "$CID"
	digest="sha256:$(sha256sum "$BUNDLE/config.json" | cut -d' ' -f1)"
	audit_has "$CID" "select(.verb == \"delete\" and .config_digest == \"$digest\")"
	# The README's query finds the run and not the create.
	[ "$(jq -c 'select(.refused)' "$AUDIT_LOG" | jq -r .verb | sort -u | tr '\n' ' ')" = "run " ]
}

@test "G11: create's audit line carries the effective profile from the field table: the limits an annotation tightened, the modes, the network lists" {
	prepare_bundle spec
	printf '{"audit_log": "%s", "limits": {"nofile": 512}, "seccomp": "agent"}\n' "$AUDIT_LOG" >"$MOAT_CONFIG"
	update_config '.annotations["run.moat.pids-limit"] = "10"'
	next_id
	moat create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	eff=$(audit_lines "$CID" | jq -c 'select(.verb == "create") | .effective')
	echo "$eff" >&2
	[ "$(jq -r .limits.pids <<<"$eff")" = 10 ]
	[ "$(jq -r .limits.nofile <<<"$eff")" = 512 ]
	[ "$(jq -r .limits.cpus <<<"$eff")" = 1.000 ]
	[ "$(jq -r .seccomp <<<"$eff")" = agent ]
	[ "$(jq -r .egress <<<"$eff")" = false ]
	[ "$(jq -r .network.mode <<<"$eff")" = "loopback only" ]
	[ "$(jq -r '.network.deny | index("169.254.0.0/16")' <<<"$eff")" != null ]
	[ "$(jq -r .userns.enabled <<<"$eff")" = true ]
	# What the table does not mark for the audit stays out of the line.
	[ "$(jq -r 'has("masked_paths") or has("credential_env") or has("audit_log")' <<<"$eff")" = false ]
	# profile show writes the same keys from the same table.
	moat profile show
	[ "$(jq -r .limits.nofile <<<"$output")" = 512 ]
}

@test "G11: lists of 10,000 entries give a bounded create line: the first 16 entries, the count and a digest of each list; profile show keeps them whole" {
	prepare_bundle spec
	deny=$(awk 'BEGIN { for (i = 0; i < 10000; i++) printf "\"203.%d.%d.0/24\",", int(i / 256), i % 256 }')
	allow=$(awk 'BEGIN { for (i = 0; i < 10000; i++) printf "\"198.%d.%d.%d/32:443\",", 18 + int(i / 65536), int(i / 256) % 256, i % 256 }')
	printf '{"audit_log": "%s", "egress_deny": [%s], "egress_allow": [%s]}\n' \
		"$AUDIT_LOG" "${deny%,}" "${allow%,}" >"$MOAT_CONFIG"
	next_id
	moat --profile egress create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	line=$(audit_lines "$CID" | jq -c 'select(.verb == "create")')
	echo "${#line} bytes" >&2
	[ "${#line}" -lt 16384 ]
	net=$(jq -c .effective.network <<<"$line")
	# The 4 built-in ranges first, then the operator's.
	[ "$(jq '.deny | length' <<<"$net")" -eq 16 ]
	[ "$(jq -r '.deny[0]' <<<"$net")" = 169.254.0.0/16 ]
	[ "$(jq -r '.deny[4]' <<<"$net")" = 203.0.0.0/24 ]
	[ "$(jq .deny_count <<<"$net")" -eq 10004 ]
	[ "$(jq '.allow | length' <<<"$net")" -eq 16 ]
	[ "$(jq -r '.allow[15]' <<<"$net")" = 198.18.0.15/32:443 ]
	[ "$(jq .allow_count <<<"$net")" -eq 10000 ]
	[[ "$(jq -r .deny_digest <<<"$net")" =~ ^words64:[0-9a-f]{16}$ ]]
	digest=$(jq -r .allow_digest <<<"$net")
	# The digest covers the whole list: the last entry changed, it changes.
	sed -i 's|198.18.39.15/32:443|198.18.39.16/32:443|' "$MOAT_CONFIG"
	cid1=$CID
	next_id
	moat --profile egress create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	net2=$(audit_lines "$CID" | jq -c 'select(.verb == "create") | .effective.network')
	[ "$(jq -r .allow_digest <<<"$net2")" != "$digest" ]
	[ "$(jq -r .deny_digest <<<"$net2")" = "$(jq -r .deny_digest <<<"$net")" ]
	moat delete -f "$cid1"
	# profile show and the short lists are whole: no count, no digest.
	moat --profile egress profile show
	[ "$(jq '.network.deny | length' <<<"$output")" -eq 10004 ]
	[ "$(jq '.network | has("deny_count")' <<<"$output")" = false ]
}
