"""A server in guest 0 and its client in guest 1 of `scripts/vm --vms 2`:
the guests meet through files in VRNIC_SHARED, and each program is
bounded. Shared by the fabric RDMA test and the cross-VM benchmark."""
import os
import re
import subprocess
import time

INDEX = int(os.environ.get("VRNIC_VM_INDEX", "0"))
SHARED = os.environ.get("VRNIC_SHARED", "/tmp")
TIMEOUT = 300


def say(prefix, msg):
    print(f"{prefix}[vm{INDEX}]: {msg}", flush=True)


def wait_file(path, secs=TIMEOUT):
    end = time.monotonic() + secs
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise TimeoutError(f"timed out waiting for {path}")
        time.sleep(0.1)


def cm_listening(port):
    """Whether an rdma_cm ID of this guest listens on `port`."""
    out = subprocess.run(["rdma", "res", "show", "cm_id"], capture_output=True, text=True).stdout
    return re.search(rf"state LISTEN .*:{port} ", out) is not None


def serve(name, args, listening=None):
    """Guest 0: runs the server of step `name` (announced once `listening()`,
    if given, is true); returns (exit status, output)."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    end = time.monotonic() + 60
    while listening and not listening() and time.monotonic() < end and p.poll() is None:
        time.sleep(0.1)
    open(os.path.join(SHARED, f"{name}.listening"), "w").close()
    try:
        out, _ = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return None, out + "\n(timed out)"
    return p.returncode, out


def connect(name, args, server):
    """Guest 1: runs the client of step `name` against `server` once guest 0
    announced it, retrying while its server does not accept yet; returns
    (exit status, output)."""
    wait_file(os.path.join(SHARED, f"{name}.listening"))
    r = None
    for _ in range(40):
        r = subprocess.run([*args, server], capture_output=True, text=True, timeout=TIMEOUT)
        out = r.stdout + r.stderr
        if r.returncode == 0 or ("Couldn't connect" not in out and "connect error" not in out):
            break
        time.sleep(0.5)
    return r.returncode, r.stdout if r.returncode == 0 else r.stdout + r.stderr
