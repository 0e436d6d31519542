"""NVMe over fabrics between the two guests of the cross-VM benchmark:
guest 0 exports one memory-backed null_blk namespace over nvmet-rdma on
vrnic0's and on rxe0's address and over nvmet-tcp on the virtio-net wire;
guest 1 connects over each in turn and runs fio on it. The target's and
host's set-up is tests/integration/storage.sh, as in the storage tests."""
import json
import os
import subprocess

from scripts.bench import pair

STORAGE = os.path.join(os.path.dirname(__file__), "../../tests/integration/storage.sh")
# (name in the results, NVMe transport, target address)
TRANSPORTS = [("vrnic0", "rdma", "192.168.77.1"), ("rxe0", "rdma", "10.0.77.1"),
              ("tcp", "tcp", "10.0.77.1")]
# (fio's rw, block size, queue depth): IOPS at 4 KiB, bandwidth at 128 KiB.
POINTS = [("randread", 4096, 32), ("read", 131072, 16)]
FIO_SECONDS = 5
TIMEOUT = 300


def sh(script, env=None):
    """stdout of `script` run with storage.sh's functions; raises with its
    output if it fails."""
    r = subprocess.run(["bash", "-c", f"set -euo pipefail; . {STORAGE}; {script}"],
                       capture_output=True, text=True, timeout=TIMEOUT,
                       env={**os.environ, **(env or {})})
    if r.returncode:
        raise RuntimeError(f"{script}: status {r.returncode}\n{r.stdout}{r.stderr}")
    return r.stdout


def fio(dev, rw, bs, depth):
    """fio's read IOPS and bandwidth (MB/s) on `dev`."""
    out = subprocess.run(["fio", "--name=bench", f"--filename={dev}", "--direct=1",
                          "--ioengine=libaio", f"--rw={rw}", f"--bs={bs}", f"--iodepth={depth}",
                          "--size=256m", "--time_based", f"--runtime={FIO_SECONDS}",
                          "--ramp_time=1", "--output-format=json"],
                         capture_output=True, text=True, timeout=TIMEOUT, check=True).stdout
    read = json.loads(out)["jobs"][0]["read"]
    if read["io_bytes"] <= 0:
        raise RuntimeError(f"fio {rw} {bs} on {dev}: nothing read\n{out}")
    return {"iops": read["iops"], "bw_MBps": read["bw_bytes"] / 1e6}


def serve():
    """Guest 0: the target on all three transports until guest 1 is done;
    True once it is torn down."""
    vrnic, rxe, tcp = (addr for _, _, addr in TRANSPORTS)
    sh(f"nvmet_export {vrnic} 0; nvmet_port 2 rdma {rxe}; nvmet_port 3 tcp {tcp}")
    try:
        open(os.path.join(pair.SHARED, "nvme.ready"), "w").close()
        pair.wait_file(os.path.join(pair.SHARED, "nvme.done"), 1200)
    finally:
        sh("nvmet_unexport")
    return True


def measure(record, say):
    """Guest 1: each transport's points, recorded; True if all ran."""
    pair.wait_file(os.path.join(pair.SHARED, "nvme.ready"))
    ok = True
    try:
        for name, trtype, addr in TRANSPORTS:
            env = {"NVME_TRTYPE": trtype}
            dev = sh(f'nvme_attach {addr} >&2; echo "$NVME_DEV"', env).strip()
            try:
                for rw, bs, depth in POINTS:
                    row = fio(dev, rw, bs, depth)
                    record({"device": name, "test": f"nvme-{rw}", "bytes": bs, **row})
                    say(f"NVMe/{trtype} on {name}, {rw} {bs} B: {row['iops']:.0f} IOPS, "
                        f"{row['bw_MBps']:.1f} MB/s")
            except (RuntimeError, subprocess.SubprocessError) as e:
                say(f"NVMe/{trtype} on {name}: {e}")
                ok = False
            finally:
                sh("nvme_detach", {**env, "NVME_DEV": dev})
    finally:
        open(os.path.join(pair.SHARED, "nvme.done"), "w").close()
    return ok
