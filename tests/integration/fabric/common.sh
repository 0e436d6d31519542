# Sourced by the fabric programs in bash once FABRIC_NAME is set: this
# guest's index i among n guests, the directory they share, and the helpers
# each program needs. Lines that start with FABRIC_NAME[vmI]: are the ones
# fabric/run collects from the guests' consoles.
i=${VRNIC_VM_INDEX:?} n=${VRNIC_VMS:?} shared=${VRNIC_SHARED:?}
say() { echo "$FABRIC_NAME[vm$i]: $*"; }
# Guest I's vrnic netdev address.
addr() { echo "192.168.77.$(($1 + 1))"; }

# wait_file PATH SECONDS: until PATH exists, or fails after SECONDS.
wait_file() {
	local t=$(($2 * 10))
	while ((t-- > 0)); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	say "timed out waiting for $1" >&2
	return 1
}

# Guest 0 runs the servers of tests/integration/peer.sh, every other guest
# its clients.
peer_roles() {
	if ((i == 0)); then
		export PEER_ROLE=server
	else
		export PEER_ROLE=client PEER_ADDR
		PEER_ADDR=$(addr 0)
	fi
}

# step CMD ARGS...: CMD ARGS PORT, PORT the one after $port, its lines
# prefixed for fabric/run; a failure is counted in $failed.
failed=0
step() {
	local out rc=0
	port=$((port + 1))
	out=$("$@" "$port") || rc=$?
	sed "s/^/$FABRIC_NAME[vm$i]: /" <<< "$out"
	((rc == 0)) || failed=$((failed + 1))
}
