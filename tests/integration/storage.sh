# Sourced by the storage tests (t_nvme_rdma, t_nfs_rdma, t_iser and the
# fabric's two-guest storage run): the NVMe over RDMA target and host, the
# iSER target and initiator, and the NFS over RDMA server and client, each
# side set up and torn down on its own so that one guest can run both or two
# guests one each. Callers run under
# `set -euo pipefail`; a failed check prints why and exits.

NVME_NQN=nqn.2026-12.org.vrnic:test
NVMET_CFG=/sys/kernel/config/nvmet
NVME_TRTYPE=${NVME_TRTYPE:-rdma}	# the host's transport: rdma, or tcp
ISCSI_IQN=iqn.2026-12.org.vrnic:test
NFS_EXPORT=/run/vrnic-nfs-export
NFS_MNT=/run/vrnic-nfs-mnt

# nvmet_export ADDR SRQ: a memory-backed null_blk namespace exported by
# nvmet-rdma on ADDR:4420, its receives on an SRQ if SRQ is 1.
nvmet_export() {
	local sub=$NVMET_CFG/subsystems/$NVME_NQN

	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 queue_mode=2
	modprobe nvmet
	modprobe nvmet-rdma use_srq="$2"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir "$sub"
	echo 1 > "$sub/attr_allow_any_host"
	mkdir "$sub/namespaces/1"
	echo /dev/nullb0 > "$sub/namespaces/1/device_path"
	echo 1 > "$sub/namespaces/1/enable"
	nvmet_port 1 rdma "$1"
}

# nvmet_port ID TRTYPE ADDR: the exported namespace also on ADDR:4420 over
# TRTYPE (rdma or tcp), as the target's port ID.
nvmet_port() {
	local port=$NVMET_CFG/ports/$1

	modprobe "nvmet-$2"
	mkdir "$port"
	echo "$2" > "$port/addr_trtype"
	echo ipv4 > "$port/addr_adrfam"
	echo "$3" > "$port/addr_traddr"
	echo 4420 > "$port/addr_trsvcid"
	ln -s "$NVMET_CFG/subsystems/$NVME_NQN" "$port/subsystems/$NVME_NQN"
}

# nvmet_check_srq: with use_srq=1 the target made its SRQ on vrnic0 when the
# first host connected.
nvmet_check_srq() {
	rdma res show srq | grep -q vrnic0 || { echo "use_srq=1 but vrnic0 has no SRQ"; exit 1; }
}

# rdma_core_reload [PARAM...]: vrnic and every module on ib_core unloaded,
# ib_core loaded again with PARAMs, vrnic up again with its address. With
# force_mr=1, rdma_rw (the NVMe and iSER targets' RDMA READs and WRITEs of
# scatter lists) registers every transfer through an MR, as on iWARP.
rdma_core_reload() {
	local m

	rmmod vrnic
	# modprobe -r also takes out dependencies left unused, ib_core among them.
	for _ in 1 2 3 4 5; do
		[[ -d /sys/module/ib_core ]] || break
		for m in /sys/module/ib_core/holders/*; do
			modprobe -r "${m##*/}" 2>/dev/null || true
		done
		modprobe -r ib_core 2>/dev/null || true
	done
	if [[ -d /sys/module/ib_core ]]; then
		echo "ib_core stays loaded, held by: $(ls /sys/module/ib_core/holders)"
		return 1
	fi
	modprobe ib_core "$@"
	"$(dirname "${BASH_SOURCE[0]}")/../../scripts/vm.d/vrnic-up"
}

# nvmet_mr_count: the MRs the NVMe target's queues hold on vrnic0.
nvmet_mr_count() {
	rdma res show mr dev vrnic0 | grep -c 'comm \[nvmet_rdma\]' || true
}

# nvmet_unexport: the target's configuration gone and its modules unloaded
# (idempotent; the unload is checked).
nvmet_unexport() {
	local sub=$NVMET_CFG/subsystems/$NVME_NQN port

	for port in "$NVMET_CFG"/ports/*; do
		[[ -d $port ]] || continue
		rm -f "$port/subsystems/$NVME_NQN"
		rmdir "$port"
	done
	if [[ -d $sub ]]; then
		echo 0 > "$sub/namespaces/1/enable"
		rmdir "$sub/namespaces/1" "$sub"
	fi
	modprobe -r nvmet-rdma nvmet-tcp nvmet null_blk
	! lsmod | grep -q '^nvmet_rdma ' || { echo "nvmet-rdma did not unload"; exit 1; }
}

# nvme_attach ADDR [OPTIONS]: connects to the target at ADDR over
# NVME_TRTYPE and sets NVME_DEV to the namespace's block device. With
# OPTIONS (the kernel's "key=value,..." for those nvme-cli 2.3 cannot pass,
# such as fast_io_fail_tmo) it writes the request to /dev/nvme-fabrics itself.
nvme_attach() {
	local addr=$1 opts=${2-} c ctrl=

	[[ -s /etc/nvme/hostnqn ]] ||
		{ mkdir -p /etc/nvme; nvme gen-hostnqn > /etc/nvme/hostnqn; }
	modprobe "nvme-$NVME_TRTYPE"
	if [[ -n $opts ]]; then
		echo "transport=$NVME_TRTYPE,traddr=$addr,trsvcid=4420,nqn=$NVME_NQN,nr_io_queues=2,$opts" \
			> /dev/nvme-fabrics
	else
		timeout 60 nvme connect -t "$NVME_TRTYPE" -n "$NVME_NQN" -a "$addr" -s 4420 -i 2
	fi
	for _ in $(seq 100); do
		for c in /sys/class/nvme/nvme*; do
			[[ $(cat "$c/subsysnqn" 2>/dev/null) == "$NVME_NQN" ]] && ctrl=${c##*/}
		done
		[[ -n $ctrl && -b /dev/${ctrl}n1 ]] && break
		sleep 0.1
	done
	[[ -n $ctrl && -b /dev/${ctrl}n1 ]] || { echo "no namespace appeared"; nvme list; exit 1; }
	[[ $(cat "/sys/class/nvme/$ctrl/transport") == "$NVME_TRTYPE" ]] ||
		{ echo "$ctrl is not over $NVME_TRTYPE"; exit 1; }
	NVME_DEV=/dev/${ctrl}n1
	echo "connected: $NVME_DEV over $NVME_TRTYPE to $addr"
}

# blk_verify DEV: writes then reads back every block of 32 MiB of DEV at
# 4 KiB, 64 KiB and 1 MiB; fio checks each block's crc32c.
blk_verify() {
	local bs

	for bs in 4k 64k 1m; do
		timeout 300 fio --name="verify-$bs" --filename="$1" \
			--direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite \
			--bs="$bs" --size=32m --verify=crc32c --do_verify=1 \
			--verify_fatal=1 --verify_state_save=0 > /tmp/fio-verify.out ||
			{ cat /tmp/fio-verify.out; exit 1; }
		grep -E '^ +(READ|WRITE):' /tmp/fio-verify.out | sed "s/^ */$bs /"
	done
}

# nvme_load_start: fio's 64 KiB random reads and writes on NVME_DEV in the
# background for up to 240 s (FIO_PID), already running when this returns.
# Tasks blocked 10 s are reported from then on (scripts/vm fails on one).
nvme_load_start() {
	echo 10 > /proc/sys/kernel/hung_task_timeout_secs
	fio --name=load --filename="$NVME_DEV" --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=randrw --bs=64k --size=64m --time_based \
		--runtime=240 > /tmp/fio-load.out 2>&1 &
	FIO_PID=$!
	sleep 2
	kill -0 "$FIO_PID" || { echo "fio ended at once"; cat /tmp/fio-load.out; exit 1; }
}

# nvme_load_fails WHAT: fio (nvme_load_start) must end in an error within
# 120 s of WHAT, and no task may be blocked 15 s after.
nvme_load_fails() {
	local t0=$SECONDS

	while ((SECONDS - t0 < 120)) && kill -0 "$FIO_PID" 2>/dev/null; do
		sleep 0.1
	done
	if kill -0 "$FIO_PID" 2>/dev/null; then
		echo "fio still runs 120 s after $1"
		exit 1
	fi
	if wait "$FIO_PID"; then
		echo "fio succeeded after $1"
		exit 1
	fi
	echo "fio failed $((SECONDS - t0)) s after $1: $(grep -m1 -o 'err=[^)]*)' /tmp/fio-load.out)"
	sleep 15
	! dmesg | grep -q 'blocked for more than' || { echo "a task hung"; exit 1; }
}

# nvme_detach: disconnects (the namespace must go) and unloads the
# transport's module.
nvme_detach() {
	timeout 60 nvme disconnect -n "$NVME_NQN"
	[[ ! -e $NVME_DEV ]] || { echo "$NVME_DEV still there after disconnect"; exit 1; }
	modprobe -r "nvme-$NVME_TRTYPE"
	! lsmod | grep -q "^nvme_$NVME_TRTYPE " || { echo "nvme-$NVME_TRTYPE did not unload"; exit 1; }
}

# iser_export ADDR: a 64 MiB LIO ramdisk exported by the kernel's iSCSI
# target on ADDR:3260 with iSER (ib_isert) enabled, to any initiator,
# without authentication.
iser_export() {
	local tpg=/iscsi/$ISCSI_IQN/tpg1

	modprobe ib_isert
	# targetcli asks tcmu-runner on the system D-Bus for its backstores and
	# fails without a bus; a guest runs none, so it gets an empty one.
	if [[ -z ${DBUS_SYSTEM_BUS_ADDRESS-} ]]; then
		{ read -r DBUS_SYSTEM_BUS_ADDRESS; read -r ISER_BUS_PID; } < \
			<(dbus-daemon --session --fork --print-address=1 --print-pid=1)
		export DBUS_SYSTEM_BUS_ADDRESS
	fi
	targetcli /backstores/ramdisk create name=vrnic size=64M
	targetcli /iscsi create "$ISCSI_IQN"
	targetcli "$tpg/luns" create /backstores/ramdisk/vrnic
	targetcli "$tpg/portals" delete 0.0.0.0 3260
	targetcli "$tpg/portals" create "$1" 3260
	targetcli "$tpg/portals/$1:3260" enable_iser true
	targetcli "$tpg" set attribute authentication=0 generate_node_acls=1 \
		demo_mode_write_protect=0 cache_dynamic_acls=1
}

# iser_unexport: the target's configuration gone and ib_isert unloaded
# (checked).
iser_unexport() {
	targetcli clearconfig confirm=True
	[[ -z ${ISER_BUS_PID-} ]] || kill "$ISER_BUS_PID"
	modprobe -r ib_isert
	! lsmod | grep -q '^ib_isert ' || { echo "ib_isert did not unload"; exit 1; }
}

# iser_login ADDR: the target at ADDR discovered and logged in to with
# iscsid's iSER transport (checked: not TCP); sets ISCSI_DEV to its disk.
iser_login() {
	local portal=$1:3260 disk=

	modprobe ib_iser
	modprobe sd_mod	# the guest has no udev to load it for the new disk
	[[ -s /etc/iscsi/initiatorname.iscsi ]] ||
		echo "InitiatorName=$(iscsi-iname)" > /etc/iscsi/initiatorname.iscsi
	mkdir -p /run/lock/iscsi
	pgrep -x iscsid > /dev/null || iscsid
	timeout 60 iscsiadm -m discovery -t sendtargets -p "$portal" > /dev/null
	iscsiadm -m node -T "$ISCSI_IQN" -p "$portal" -o update \
		-n iface.transport_name -v iser
	timeout 60 iscsiadm -m node -T "$ISCSI_IQN" -p "$portal" --login
	for _ in $(seq 300); do
		disk=$(iscsiadm -m session -P 3 | awk '/Attached scsi disk/ { print $4 }')
		[[ -n $disk && -b /dev/$disk ]] && break
		sleep 0.1
	done
	[[ -n $disk && -b /dev/$disk ]] || { echo "no disk appeared"; iscsiadm -m session -P 3; exit 1; }
	iscsiadm -m session -P 1 | grep -q 'Iface Transport: iser' ||
		{ echo "the session is not over iSER:"; iscsiadm -m session -P 1; exit 1; }
	ISCSI_DEV=/dev/$disk
	echo "logged in: $ISCSI_DEV over iSER to $portal"
}

# iser_logout: logged out (the disk must go), iscsid stopped, ib_iser
# unloaded (checked).
iser_logout() {
	timeout 60 iscsiadm -m node -T "$ISCSI_IQN" --logout
	[[ ! -e $ISCSI_DEV ]] || { echo "$ISCSI_DEV still there after logout"; exit 1; }
	iscsiadm -m node -o delete
	iscsiadm -k 0
	modprobe -r ib_iser
	! lsmod | grep -q '^ib_iser ' || { echo "ib_iser did not unload"; exit 1; }
}

# nfs_export NET: a tmpfs exported to NET as the NFSv4 root (fsid=0), with
# an RDMA listener on port 20049. NFSv4 only: neither rpc.mountd nor
# rpc.nfsd needs rpcbind.
nfs_export() {
	local net=$1

	modprobe nfsd
	modprobe rpcrdma
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p "$NFS_EXPORT" /var/lib/nfs/v4recovery
	mount -t tmpfs -o size=256m tmpfs "$NFS_EXPORT"
	# A short grace period: the server has just started, with no clients
	# to reclaim state.
	echo 10 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
	exportfs -o rw,no_root_squash,insecure,fsid=0 "$net:$NFS_EXPORT"
	rpc.mountd -N 2 -N 3 --no-udp
	rpc.nfsd -N 3 --no-udp 4
	echo "rdma 20049" > /proc/fs/nfsd/portlist
	grep -q '^rdma 20049' /proc/fs/nfsd/portlist ||
		{ echo "no RDMA listener:"; cat /proc/fs/nfsd/portlist; exit 1; }
}

# nfs_unexport: the server stopped and the export gone (idempotent).
nfs_unexport() {
	rpc.nfsd 0 2>/dev/null || true
	exportfs -ua 2>/dev/null || true
	pkill -x rpc.mountd || true
	umount "$NFS_EXPORT" 2>/dev/null || true
}

# nfs_mount SERVER: SERVER's NFSv4 root on NFS_MNT, over RDMA (checked: not
# a TCP fallback).
nfs_mount() {
	mkdir -p "$NFS_MNT"
	timeout 120 mount -t nfs4 -o rdma,port=20049,vers=4.2 "$1:/" "$NFS_MNT"
	grep -q " $NFS_MNT nfs4 .*proto=rdma" /proc/mounts ||
		{ echo "not an RDMA mount:"; grep " $NFS_MNT " /proc/mounts; exit 1; }
}

# nfs_write_file SRC: SRC copied to the export as `file`, synced, unmounted.
nfs_write_file() {
	timeout 300 dd if="$1" of="$NFS_MNT/file" bs=1M conv=fsync status=none
	umount "$NFS_MNT"
}

# nfs_read_check SUM: a fresh mount's `file` (read over RDMA, not from the
# client's cache) has sha256 SUM.
nfs_read_check() {
	local got

	got=$(timeout 300 sha256sum < "$NFS_MNT/file")
	umount "$NFS_MNT"
	[[ $got == "$1" ]] || { echo "read back differs"; exit 1; }
}

# storage_cleanup: whatever a failed test left, gone without a word (the
# tests' EXIT trap).
storage_cleanup() {
	set +e
	nvme disconnect -n "$NVME_NQN" >/dev/null 2>&1
	umount -f "$NFS_MNT" 2>/dev/null
	nfs_unexport
	(nvmet_unexport) >/dev/null 2>&1
	iscsiadm -m node --logoutall=all >/dev/null 2>&1
	iscsiadm -k 0 >/dev/null 2>&1
	targetcli clearconfig confirm=True >/dev/null 2>&1
	modprobe -r ib_iser ib_isert 2>/dev/null
	modprobe -r "nvme-$NVME_TRTYPE" 2>/dev/null
}
