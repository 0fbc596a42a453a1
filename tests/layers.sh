#!/usr/bin/env bash
# The layers of the tree (README "Layout"), checked on the sources and on the
# built objects: lib/ uses nothing of moat's; oci/ uses lib/; policy/ uses
# lib/ and oci/, never a mechanism of runtime/. Usage: tests/layers.sh BUILD
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
declare -A allowed=([lib]="lib" [oci]="lib oci" [policy]="lib oci policy")
fail=0
for layer in lib oci policy; do
	for f in "$layer"/*.[ch]; do
		while read -r inc; do
			target=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
			top=${target%%/*}
			case " ${allowed[$layer]} " in
			*" $top "*) ;;
			*) echo "layers: $f includes $inc ($top/ is not below $layer/)"; fail=1 ;;
			esac
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
	# Link level: every symbol the layer's objects need that moat defines
	# must come from an allowed layer.
	defined_by_others=$(for d in cmd runtime hooks; do
		for o in "$build/$d"/*.o; do nm --defined-only "$o" | awk '$2 ~ /[TDBR]/ {print $3}'; done
	done | sort -u)
	needed=$(for o in "$build/$layer"/*.o; do nm -u "$o" | awk '{print $2}'; done | sort -u)
	bad=$(comm -12 <(echo "$defined_by_others") <(echo "$needed"))
	if [ -n "$bad" ]; then
		echo "layers: $layer/ calls into a higher layer: $(echo $bad)"
		fail=1
	fi
done
[ "$fail" = 0 ] && echo "layers: lib < oci < policy < runtime hold"
exit "$fail"
