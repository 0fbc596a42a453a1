#!/usr/bin/env bash
# The layers of the tree: tests/layers.py holds the table of which folder
# may include and call which, and checks it on the sources and on the
# built objects, function by function. Usage: tests/layers.sh [BUILD]
exec python3 "$(dirname "$0")/layers.py" "$@"
