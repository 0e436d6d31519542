# Sourced by the t_*_pingpong tests: one run of an rdma-core pingpong
# example, server and client in this guest, with data validation (-c).
#
# pp_run TOOL PORT SIZE ITERS [ARGS...]: both sides must exit 0 and report
# their throughput and latency over ITERS iterations; prints the client's
# latency line. Needs $gid (the RoCE v2 IPv4 GID index of vrnic0).
pp_run() {
	local tool=$1 port=$2 size=$3 iters=$4 client="" server_out
	shift 4
	local args=(-d vrnic0 -g "$gid" -c -s "$size" -n "$iters" -p "$port" "$@")

	"$tool" "${args[@]}" > /tmp/pp-server 2>&1 &
	local server=$!
	# The server may take a moment to listen under TCG: retry the connect.
	for _ in $(seq 20); do
		sleep 0.5
		client=$("$tool" "${args[@]}" 127.0.0.1 2>&1) && break
		grep -q "Couldn't connect" <<< "$client" || break
	done
	[[ $client == *"usec/iter"* ]] || { echo "$tool: $client"; cat /tmp/pp-server; return 1; }
	wait "$server" || { echo "$tool server failed:"; cat /tmp/pp-server; return 1; }
	server_out=$(cat /tmp/pp-server)
	for out in "$client" "$server_out"; do
		grep -Eq "^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec" <<< "$out" &&
			grep -Eq "^$iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter" <<< "$out" ||
			{ echo "$tool size $size: no result:"; echo "$out"; return 1; }
	done
	echo "$tool size $size: $(grep usec/iter <<< "$client")"
}

# The active MTU of vrnic0's port 1 in bytes.
pp_active_mtu() {
	ibv_devinfo -d vrnic0 -i 1 | awk '/active_mtu:/ { print $2; exit }'
}
