"""Run one perftest point (server and client in this guest) and parse it.

Shared by the benchmark and the integration tests: a run that prints no
result is an error, never a zero.
"""
import re
import subprocess
import time

BW_TESTS = {"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw"}
LAT_TESTS = {"ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat"}
# The RC and UD points make bench measures between two VMs.
RC_POINTS = [("ib_write_bw", 65536), ("ib_write_bw", 64), ("ib_read_bw", 65536),
             ("ib_send_bw", 64), ("ib_write_lat", 8), ("ib_send_lat", 8)]
UD_POINTS = [("ib_send_lat", 8), ("ib_send_bw", 64), ("ib_send_bw", 1024)]


def vm_point_args(test, dev, gid, port, size, conn="RC", outs=None):
    """perftest's arguments for one point between two VMs (cross-vm-run,
    wire-run): bandwidth for 2 s, latency over 5000 iterations. `outs`:
    the READs in flight (perftest gives the requester the responder's
    count, which must not exceed what the requester's device takes)."""
    args = [test, "-d", dev, "-x", str(gid), "-p", str(port), "-F", "-s", str(size), "-c", conn]
    if outs and test in ("ib_read_bw", "ib_read_lat"):
        args += ["-o", str(outs)]
    return args + (["-D", "2"] if test in BW_TESTS else ["-n", "5000"])


class PerftestError(RuntimeError):
    pass


LAT_COLUMNS = ("t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us",
               "p99_us", "p99_9_us")


def _rows(text):
    """The numeric rows of perftest's result table (after the #bytes header)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("#bytes"):
            rows = []
            for row in lines[i + 1:]:
                fields = row.split()
                if not fields or not re.fullmatch(r"\d+", fields[0]):
                    break
                rows.append([float(f) for f in fields])
            return rows
    return []


def parse(test, text):
    """Parse a client's output into a list of result dicts, one per size."""
    rows = _rows(text)
    if not rows:
        raise PerftestError(f"{test}: no result table in output:\n{text[-2000:]}")
    out = []
    for r in rows:
        res = {"bytes": int(r[0]), "iterations": int(r[1])}
        if test in BW_TESTS:
            res.update(bw_peak_MBps=r[2], bw_avg_MBps=r[3], msg_rate_Mpps=r[4])
        else:
            res.update(zip(LAT_COLUMNS, r[2:]))
        if res["iterations"] <= 0:
            raise PerftestError(f"{test}: no iterations:\n{text[-2000:]}")
        out.append(res)
    return out


def measured(res):
    """False for a row where perftest printed a zero rate or latency. Under
    TCG perftest's cycle-counter clock now and then yields such a row, on
    rxe as on vrnic; it is not a measurement."""
    return res.get("msg_rate_Mpps", 1) > 0 and res.get("t_typical_us", 1) > 0


def run(test, device, gid_index, size=None, port=18515, extra=(), all_sizes=False,
        timeout=300, client_prefix=(), addr="127.0.0.1"):
    """Run server and client of `test` on `device`, the client connecting to
    `addr` (with -R, rdma_cm finds the device from it); return (results,
    client output)."""
    args = [test, "-d", device, "-x", str(gid_index), "-F", "-p", str(port), *extra]
    if all_sizes:
        args.append("-a")
    elif size is not None:
        args += ["-s", str(size)]
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(0.5)
        client = None
        for _ in range(20):  # the server may not listen yet
            client = subprocess.run([*client_prefix, *args, addr], capture_output=True,
                                    text=True, timeout=timeout)
            if client.returncode == 0 or "Couldn't connect" not in client.stdout + client.stderr:
                break
            time.sleep(0.5)
        sout, _ = server.communicate(timeout=timeout)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    text = client.stdout + client.stderr
    if client.returncode != 0 or server.returncode != 0:
        raise PerftestError(f"{' '.join(args)}: client exit {client.returncode}, server exit "
                            f"{server.returncode}\n--- client\n{text[-2000:]}\n--- server\n{sout[-2000:]}")
    return parse(test, text), text
