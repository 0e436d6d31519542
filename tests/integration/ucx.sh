# Sourced by t_ucx and fabric/ucx: one ucx_perftest run over vrnic0:1.
#
# ucx_run TL TEST SIZE ITERS PORT: ucx_perftest's server and client as
# PEER_ROLE asks (peer.sh). ucx_perftest checks no data (MPI does, over the same UCX): the
# client must finish all its iterations, and the lanes UCX chose, as its
# log names them, must all be TL on vrnic0:1. UCX may use no other
# transport: UCX_TLS is TL, with ud_verbs for RC's wire-up. Counts a
# failure in $ucx_failed and prints the client's figures.
. "$(dirname "${BASH_SOURCE[0]}")/peer.sh"
ucx_dev=vrnic0:1
ucx_failed=0
export UCX_NET_DEVICES=$ucx_dev UCX_LOG_LEVEL=info

# ucx_has_transports TL...: ucx_info -d lists each TL on vrnic0:1.
ucx_has_transports() {
	local devs tl
	devs=$(ucx_info -d)
	for tl in "$@"; do
		awk -v tl="$tl" -v dev="$ucx_dev" '
			/Transport:/ { t = $3 } /Device:/ && t == tl && $3 == dev { ok = 1 }
			END { exit !ok }' <<< "$devs" ||
			{ echo "ucx_info -d: no $tl on $ucx_dev"; echo "$devs"; return 1; }
	done
	echo "ucx_info -d: $* on $ucx_dev"
}

ucx_run() {
	local tl=$1 test=$2 size=$3 iters=$4 port=$5 tls=$1 log=/tmp/ucx-$5
	[[ $tl == rc_verbs ]] && tls=rc_verbs,ud_verbs
	local server_cmd=(env UCX_TLS="$tls" ucx_perftest -p "$port")
	local client_cmd=(env UCX_TLS="$tls" ucx_perftest "${PEER_ADDR:-127.0.0.1}" -p "$port"
		-t "$test" -s "$size" -n "$iters" -w 100 -f)
	peer_run 120 0.25 'connect.*failed\|Connection refused' "$log"
	local what="$tl $test size $size"
	# -f prints the final row only: iterations, latency (typical, average,
	# overall) in usec, bandwidth (average, overall) in MB/s and message
	# rate (average, overall) in msg/s.
	local final=''
	[[ ${PEER_ROLE:-both} == server ]] ||
		final=$(awk -v n="$iters" 'NF == 8 && $1 == n' "$log-client" | tail -n 1)
	if ((peer_rc)) || [[ ${PEER_ROLE:-both} != server && -z $final ]]; then
		peer_failed "$what" "$log"
		ucx_failed=$((ucx_failed + 1))
		return 1
	fi
	# The lanes UCX configured for the test's operations.
	local lanes
	lanes=$(cat "$log-client" "$log-server" | grep -o 'ep_cfg\[[0-9]*\]: .*' | sort -u || true)
	if [[ -z $lanes ]] ||
		grep -o '[a-z_]*/[^ );]*' <<< "$lanes" | grep -vxF "$tl/$ucx_dev" | grep -q .; then
		echo "$what: lanes not $tl on $ucx_dev:"
		echo "$lanes"
		ucx_failed=$((ucx_failed + 1))
		return 1
	fi
	[[ $size != 8 ]] || echo "$tl $test: UCX lanes: $lanes"
	if [[ -z $final ]]; then
		echo "$what x$iters: served"
		return 0
	fi
	local lat_typ lat_avg bw_avg rate_avg
	read -r _ lat_typ lat_avg _ bw_avg _ rate_avg _ <<< "$final"
	echo "$what x$iters: typical ${lat_typ} us, average ${lat_avg} us," \
		"${bw_avg} MB/s, ${rate_avg} msg/s"
}
