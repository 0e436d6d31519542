# Sourced by the t_cm_* tests: a server and a client of an rdma_cm tool in
# this guest, over vrnic0's IPv4 address (scripts/vm.d/vrnic-addr), each
# process under `timeout`.
CM_ADDR=${VRNIC_GUEST_ADDR:-192.168.77.1/24}
CM_ADDR=${CM_ADDR%/*}
CM_TIMEOUT=${CM_TIMEOUT:-120}

# cm_wait_listen PORT: until an rdma_cm ID listens on PORT (at most 60 s).
cm_wait_listen() {
	local i
	for i in $(seq 600); do
		rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*:$1 " && return 0
		sleep 0.1
	done
	echo "nobody listens on port $1"
	return 1
}

# cm_pair NAME PORT "SERVER ARGS" "CLIENT ARGS": both sides must exit 0;
# their standard output is left in /tmp/cm-server and /tmp/cm-client (the
# error output, which the tools write asynchronously, in *.err).
cm_pair() {
	local name=$1 port=$2 server_args=$3 client_args=$4 server rc=0
	# shellcheck disable=SC2086
	timeout "$CM_TIMEOUT" $server_args > /tmp/cm-server 2> /tmp/cm-server.err &
	server=$!
	if ! cm_wait_listen "$port"; then
		kill "$server" 2>/dev/null
		wait "$server"
		cat /tmp/cm-server /tmp/cm-server.err
		return 1
	fi
	# shellcheck disable=SC2086
	timeout "$CM_TIMEOUT" $client_args > /tmp/cm-client 2> /tmp/cm-client.err || rc=$?
	if ((rc)); then
		echo "$name client: exit status $rc"
		cat /tmp/cm-client /tmp/cm-client.err
		kill "$server" 2>/dev/null
	fi
	wait "$server" || { echo "$name server: exit status $?"; cat /tmp/cm-server /tmp/cm-server.err; rc=1; }
	((rc == 0)) || return 1
	echo "$name: both sides exited 0"
}

# cm_expect FILE PATTERN COUNT: FILE has exactly COUNT lines matching PATTERN.
cm_expect() {
	local n
	n=$(grep -Ec "$2" "$1" || true)
	((n == $3)) || { echo "$1: $n lines match '$2', expected $3"; cat "$1"; return 1; }
}
