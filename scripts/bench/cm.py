"""Connection set-up through rdma_cm, for the benchmark: rdma-core's cmtime
sets up N RC connections at once and times each step. The server (cmtime
without -s) never exits by design, so it is killed once the client is
done."""
import re
import subprocess
import time

from scripts.bench import devices, pair
from scripts.bench.perftest import PerftestError


def parse(text, n):
    """cmtime's client output -> {"conn_per_s", "connect_ms"}: its "connect"
    row's first column is the step's total time over all N connections."""
    m = re.search(r"^connect\s*:\s*([0-9.]+)", text, re.M)
    if not m or float(m.group(1)) <= 0:
        raise PerftestError(f"cmtime: no connect time in output:\n{text[-2000:]}")
    ms = float(m.group(1))
    return {"conn_per_s": n * 1000 / ms, "connect_ms": ms}


def cmtime(device, n, port, timeout=300):
    """N connections to cmtime's server on `device`'s IPv4 address:
    ([result], client output)."""
    addr = devices.ipv4_of(device)
    server = subprocess.Popen(["cmtime", "-b", addr, "-p", str(port)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(100):  # until it listens
            if pair.cm_listening(port):
                break
            time.sleep(0.1)
        client = subprocess.run(["cmtime", "-s", addr, "-p", str(port), "-c", str(n)],
                                capture_output=True, text=True, timeout=timeout)
    finally:
        server.kill()
        sout, _ = server.communicate()
    text = client.stdout + client.stderr
    if client.returncode != 0:
        raise PerftestError(f"cmtime -s {addr} -c {n}: exit {client.returncode}\n{text[-2000:]}"
                            f"\n--- server\n{sout[-2000:]}")
    return [parse(text, n)], text
