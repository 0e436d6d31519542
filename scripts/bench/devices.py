"""Find and bring up the RDMA devices of a guest: rxe0 and vrnic0.
   python3 -m scripts.bench.devices DEVICE [--ipv6]   prints the index of
   DEVICE's RoCE v2 GID of its IPv4 (or link-local IPv6) address once it
   has one."""
import os
import subprocess
import sys
import time

SYS = "/sys/class/infiniband"


V4_MAPPED = "0000:0000:0000:0000:0000:ffff:"
LINK_LOCAL = "fe80:"


def roce_v2_gid(device, prefix):
    """Index of the device's RoCE v2 GID whose address starts with prefix."""
    port = f"{SYS}/{device}/ports/1"
    for name in sorted(os.listdir(f"{port}/gids"), key=int):
        try:
            with open(f"{port}/gids/{name}") as f:
                gid = f.read().strip()
            with open(f"{port}/gid_attrs/types/{name}") as f:
                kind = f.read().strip()
        except OSError:
            continue  # unused entries cannot be read
        if kind == "RoCE v2" and gid.startswith(prefix):
            return int(name)
    raise RuntimeError(f"{device}: no RoCE v2 GID {prefix}...")


def roce_v2_ipv4_gid(device):
    """Index of the device's RoCE v2 GID that carries an IPv4 address."""
    return roce_v2_gid(device, V4_MAPPED)


def netdev_of(device):
    out = subprocess.run(["rdma", "link", "show", f"{device}/1"], capture_output=True,
                         text=True, check=True).stdout.split()
    return out[out.index("netdev") + 1] if "netdev" in out else None


def ipv4_of(device):
    """The IPv4 address of the device's netdev, which rdma_cm resolves to it."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", netdev_of(device)],
                         capture_output=True, text=True, check=True).stdout.split()
    if "inet" not in out:
        raise RuntimeError(f"{device}: its netdev has no IPv4 address")
    return out[out.index("inet") + 1].split("/")[0]


def bring_up_rxe(netdev="eth0"):
    if not os.path.exists(f"{SYS}/rxe0"):
        subprocess.run(["modprobe", "rdma_rxe"], check=True)
        subprocess.run(["rdma", "link", "add", "rxe0", "type", "rxe", "netdev", netdev], check=True)
    return "rxe0"


def wait_gid(device, tries=50, prefix=V4_MAPPED):
    for _ in range(tries):
        try:
            return roce_v2_gid(device, prefix)
        except (RuntimeError, OSError):
            time.sleep(0.1)
    return roce_v2_gid(device, prefix)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--ipv6"]):
        sys.exit("usage: python3 -m scripts.bench.devices DEVICE [--ipv6]")
    print(wait_gid(sys.argv[1], prefix=LINK_LOCAL if sys.argv[2:] else V4_MAPPED))
