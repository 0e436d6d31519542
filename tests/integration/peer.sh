# Sourced by ucx.sh and libfabric.sh: one test program's server and client
# on vrnic0, both in this guest or one in each of two guests.
#
# PEER_ROLE is both (the default), server or client; a client in another
# guest than its server reaches PEER_ADDR.
#
# peer_run TRIES PAUSE RETRY_RE LOG: starts the caller's array server_cmd
# in the background (unless PEER_ROLE=client), then its client_cmd (unless
# PEER_ROLE=server), again after PAUSE seconds, at most TRIES times, while
# it fails with output matching RETRY_RE (the server may not listen yet),
# and waits for the server. Each runs at most 300 s, its output in
# LOG-server or LOG-client; peer_rc is the first failing status.
peer_run() {
	local tries=$1 pause=$2 retry=$3 log=$4 role=${PEER_ROLE:-both} server='' t
	peer_rc=0
	: > "$log-server"
	: > "$log-client"
	if [[ $role != client ]]; then
		timeout 300 "${server_cmd[@]}" > "$log-server" 2>&1 &
		server=$!
	fi
	if [[ $role != server ]]; then
		for ((t = 0; t < tries; t++)); do
			sleep "$pause"
			timeout 300 "${client_cmd[@]}" > "$log-client" 2>&1 && peer_rc=0 || peer_rc=$?
			((peer_rc)) && grep -qi "$retry" "$log-client" || break
		done
	fi
	if [[ -n $server ]]; then
		wait "$server" || peer_rc=$((peer_rc ? peer_rc : $?))
	fi
}

# peer_failed WHAT LOG: a failed run, with the end of both outputs.
peer_failed() {
	echo "$1: FAILED (status $peer_rc)"
	tail -n 20 "$2-client" "$2-server"
}
