#!/usr/bin/env python3
"""Starving the registry without a token (issue 11, finding 2).

1. 1 000 idle TCP sockets against `--max-connections 8`: how long `GET
   /health` and `GET /index/NAME` wait, on fresh connections (median and
   max of several runs). Before the fix they waited ~85 s.
2. 300 clients that request a ~9.5 MB package and never read it: the
   registry's VmRSS before and during. Before the fix: 10 MB -> 2.8 GB.

Run: python3 benches/registry_starve.py
"""
import http.client
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, isolated_env, skillpm_bin  # noqa: E402

REGISTRY = os.path.join(ROOT, "target", "release", "skillpm-registry")


def serve(data, *args):
    proc = subprocess.Popen(
        [REGISTRY, "serve", "--listen", "127.0.0.1:0", "--data", data, *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    line = proc.stdout.readline()
    host, port = line.strip().rsplit("/", 1)[-1].split(":")
    return proc, host, int(port)


def token(data):
    return subprocess.run(
        [REGISTRY, "token", "create", "--user", "bench", "--data", data],
        capture_output=True, text=True, check=True,
    ).stdout.strip()


def publish(exe, env, src, url, tok):
    subprocess.run([exe, "publish", src, "--registry", url, "--token", tok],
                   env=env, check=True, capture_output=True)


def timed_get(host, port, path):
    start = time.perf_counter()
    c = http.client.HTTPConnection(host, port, timeout=120)
    c.request("GET", path)
    r = c.getresponse()
    r.read()
    c.close()
    assert r.status == 200, r.status
    return time.perf_counter() - start


def vm_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def idle_sockets(tmp, exe, env, runs=5):
    data = os.path.join(tmp, "idle")
    proc, host, port = serve(data, "--max-connections", "8")
    try:
        src = os.path.join(tmp, "src", "idle-check")
        os.makedirs(src)
        with open(os.path.join(src, "SKILL.md"), "w") as f:
            f.write("---\nname: idle-check\ndescription: x\nversion: 1.0.0\n---\nbody\n")
        publish(exe, env, src, f"http://{host}:{port}", token(data))
        health, index = [], []
        for _ in range(runs):
            idle = [socket.create_connection((host, port)) for _ in range(1000)]
            health.append(timed_get(host, port, "/health"))
            index.append(timed_get(host, port, "/index/idle-check"))
            for s in idle:
                s.close()
        return health, index
    finally:
        proc.kill()
        proc.wait()


def stalled_downloads(tmp, exe, env, clients=300):
    data = os.path.join(tmp, "big")
    proc, host, port = serve(data, "--max-connections", "400", "--idle-timeout", "120")
    try:
        src = os.path.join(tmp, "src", "big")
        os.makedirs(os.path.join(src, "assets"))
        with open(os.path.join(src, "SKILL.md"), "w") as f:
            f.write("---\nname: big\ndescription: x\nversion: 1.0.0\n---\nbody\n")
        with open(os.path.join(src, "assets", "blob.bin"), "wb") as f:
            f.write(random.Random(7).randbytes(9_500_000))
        publish(exe, env, src, f"http://{host}:{port}", token(data))
        before = vm_rss_mb(proc.pid)
        socks = []
        for _ in range(clients):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect((host, port))
            s.sendall(b"GET /api/v1/skills/big/1.0.0/download HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append(s)
        for s in socks:
            head = b""
            while b"\r\n\r\n" not in head:
                head += s.recv(1)
            assert head.startswith(b"HTTP/1.1 200"), head
        time.sleep(2)
        during = vm_rss_mb(proc.pid)
        for s in socks:
            s.close()
        return before, during
    finally:
        proc.kill()
        proc.wait()


def main():
    exe = skillpm_bin()
    with tempfile.TemporaryDirectory() as tmp:
        env = isolated_env(tmp)
        health, index = idle_sockets(tmp, exe, env)
        print("1000 idle sockets, --max-connections 8 (fresh connection per request):")
        print(f"  /health        median {statistics.median(health)*1000:7.1f} ms  max {max(health)*1000:7.1f} ms")
        print(f"  /index/NAME    median {statistics.median(index)*1000:7.1f} ms  max {max(index)*1000:7.1f} ms")
        before, during = stalled_downloads(tmp, exe, env)
        print("300 clients that never read a 9.5 MB download:")
        print(f"  registry VmRSS {before:.0f} MB before, {during:.0f} MB during")
        shutil.rmtree(os.path.join(tmp, "src"), ignore_errors=True)


if __name__ == "__main__":
    main()
