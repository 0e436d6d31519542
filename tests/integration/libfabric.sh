# Sourced by t_libfabric and fabric/libfabric: fi_pingpong over libfabric's
# verbs provider on vrnic0, its data checked (-c).
#
# fi_has_vrnic: fi_info -p verbs lists vrnic0 for FI_EP_MSG and, through
# ofi_rxm, FI_EP_RDM.
#
# fi_run EP PROV SIZE ITERS PORT: fi_pingpong's server and client as
# PEER_ROLE asks (peer.sh), in one guest against vrnic0's own address. Both
# must exit 0 and the client must report its row. Counts a failure in $fi_failed.
#
# ofi_rxm sizes its verbs CQ as (tx + rx queue size) x FI_UNIVERSE_SIZE:
# 262144 CQEs by default, beyond vrnic0's max_cqe (65536; rxe has 32768),
# and libfabric does not clamp it, so ibv_create_cq fails with EINVAL. A
# universe of 64 peers gives 65536: callers set it for FI_EP_RDM.
. "$(dirname "${BASH_SOURCE[0]}")/peer.sh"
fi_failed=0

fi_has_vrnic() {
	local info want
	info=$(fi_info -p verbs)
	for want in FI_EP_MSG FI_EP_RDM; do
		awk -v t="$want" '/domain:/ { d = $2 } /type:/ && $2 == t && d == "vrnic0" { ok = 1 }
			END { exit !ok }' <<< "$info" ||
			{ echo "fi_info -p verbs: no $want on vrnic0"; echo "$info"; return 1; }
	done
	echo "fi_info -p verbs: vrnic0 with FI_EP_MSG and FI_EP_RDM"
}

# vrnic0's netdev's IPv4 address: the verbs provider reaches a peer by IP
# address (rdma_cm).
fi_own_addr() {
	local netdev addr
	netdev=$(rdma link show vrnic0/1 | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	addr=$(ip -4 -o addr show dev "$netdev" | awk '{ sub("/.*", "", $4); print $4; exit }')
	[[ -n $addr ]] || { echo "vrnic0's netdev $netdev has no IPv4 address" >&2; return 1; }
	echo "$addr"
}

fi_run() {
	local ep=$1 prov=$2 size=$3 iters=$4 port=$5 log=/tmp/fi-$5
	local args=(fi_pingpong -p "$prov" -e "$ep" -d vrnic0 -S "$size" -I "$iters" -c)
	local what="fi_pingpong -e $ep ($prov) size $size"
	if [[ ${PEER_ROLE:-both} == both && -z ${PEER_ADDR:-} ]]; then
		PEER_ADDR=$(fi_own_addr) || return 1
	fi
	local server_cmd=("${args[@]}" -B "$port") client_cmd=("${args[@]}" -P "$port" "${PEER_ADDR:-}")
	peer_run 60 0.5 connect "$log"
	# bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec; the counts
	# in fabtests' units (1k = 1000)
	local row=''
	[[ ${PEER_ROLE:-both} == server ]] ||
		row=$(awk 'NF == 8 && $1 ~ /^[0-9]+[kmg]?$/ && $3 == "=" $2 { print; exit }' "$log-client")
	if ((peer_rc)) || [[ ${PEER_ROLE:-both} != server && -z $row ]]; then
		peer_failed "$what" "$log"
		fi_failed=$((fi_failed + 1))
		return 1
	fi
	if [[ -z $row ]]; then
		echo "$what x$iters: served"
	else
		echo "$what: $row"
	fi
}
