#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# `make check-engines`: bring the engines up (setup.sh), run every test of
# this directory against them, and stop them again whatever happened.
# KEEP_ENGINES=1 leaves them running (stop.sh stops them later);
# BATS_FLAGS adds bats options (e.g. "-f docker" or "--timing").
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if [ "${KEEP_ENGINES:-0}" != 1 ]; then
	trap '"$here/stop.sh"' EXIT
fi
# shellcheck disable=SC2086
"$here/setup.sh" ${SETUP_FLAGS:-} || exit 1
# shellcheck disable=SC2086
bats ${BATS_FLAGS:-} "$here"/contract.bats "$here"/docker.bats "$here"/podman.bats "$here"/containerd.bats
