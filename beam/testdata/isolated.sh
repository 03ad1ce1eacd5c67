#!/usr/bin/env bash
# isolated.sh CMD [ARGS...]: runs CMD in a network namespace of its own,
# where the only interface is loopback. The Beam tests run pipelines on
# prism in process, and prism's job server listens on ":0" — every
# interface — with no option to choose (jobservices.NewServer in Beam
# v2.77.0); in a namespace whose only interface is lo, that is loopback
# only, as every test server of this project must be. Where no namespace
# can be made (no unshare, no privilege), it prints why and succeeds
# without running CMD: "test-beam: SKIPPED: ...".
set -uo pipefail
why=""
if ! command -v unshare >/dev/null; then
	why="unshare (util-linux) is not installed"
elif ! command -v ip >/dev/null; then
	why="ip (iproute2) is not installed"
elif ! unshare -n true 2>/dev/null && ! unshare -rn true 2>/dev/null; then
	why="no network namespace can be made here (needs root or user namespaces)"
fi
if [ -n "$why" ]; then
	echo "test-beam: SKIPPED: prism's job server would listen on every interface, and $why"
	exit 0
fi
flags=-n
unshare -n true 2>/dev/null || flags=-rn
exec unshare "$flags" sh -c 'ip link set lo up && exec "$@"' sh "$@"
