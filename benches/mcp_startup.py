#!/usr/bin/env python3
"""`skillpm mcp` start-up over 10 000 generated skills.

Each run starts the server on a bare pipe and times, from the process
start, the first answered `initialize` and then `resources/list` (every
page): discovery, parsing, reading every served file and its digest, and
the first answers. It also reports the server's CPU time (user + system,
from `wait4`), which holds when other work shares the machine and wall
time does not. The first run (page cache cold for the new tree) is
reported on its own; the rest have the tree in the page cache, as a
server restarted by its host has, and alternate: a cold start (what the
server keeps between starts removed from skillpm's cache first) and a
warm one (an unchanged tree, kept parses and digests).

The tree is benches/search.py's (one SKILL.md per skill, with triggers and
a body) plus one bundled script per skill, so there are two served files
per skill.
Run: python3 benches/mcp_startup.py [--runs N] [--skills N]
     (SKILLPM_BIN=path skips the release build)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from common import isolated_env, line_rpc, skillpm_bin
from search import make_tree


def start_up(exe, project, env):
    """Seconds to the answered `initialize`, and to the last page of
    `resources/list`; and how many resources were listed."""
    start = time.perf_counter()
    p = subprocess.Popen([exe, "-C", project, "mcp"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    line = line_rpc(p)

    def rpc(method, params=None, note=False):
        answer = line(method, params, note)
        return answer and json.loads(answer)

    init = rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "0"}})
    assert "result" in init, init
    ready = time.perf_counter() - start
    rpc("notifications/initialized", note=True)
    listed, cursor = 0, None
    while True:
        r = rpc("resources/list", {"cursor": cursor} if cursor else {})["result"]
        listed += len(r["resources"])
        cursor = r.get("nextCursor")
        if not cursor:
            break
    answered = time.perf_counter() - start
    p.stdin.close()
    p.stdout.close()
    _, _, usage = os.wait4(p.pid, 0)
    return ready, answered, listed, usage.ru_utime + usage.ru_stime


def fmt(samples):
    return f"median {statistics.median(samples):.2f} s (min {min(samples):.2f}, max {max(samples):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skills", type=int, default=10000)
    args = ap.parse_args()
    exe = os.environ.get("SKILLPM_BIN") or skillpm_bin()
    with tempfile.TemporaryDirectory() as tmp:
        env = isolated_env(tmp)
        project = os.path.join(tmp, "p")
        root = make_tree(project, args.skills)
        for dirpath, _, names in os.walk(root):
            if "SKILL.md" in names:
                os.makedirs(os.path.join(dirpath, "scripts"))
                with open(os.path.join(dirpath, "scripts", "run.sh"), "w") as f:
                    f.write("#!/bin/sh\necho run\n")
        first = start_up(exe, project, env)
        # Kept files must be older than the fingerprint's settling time.
        time.sleep(3.5)
        kept = os.path.join(env["XDG_CACHE_HOME"], "skillpm", "mcp-v1")
        cold, warm = [], []
        for _ in range(args.runs):
            shutil.rmtree(kept, ignore_errors=True)
            cold.append(start_up(exe, project, env))
            warm.append(start_up(exe, project, env))
        print(f"skillpm mcp, {args.skills} generated skills, {first[2]} resources listed")
        print(f"  first start, tree just written: initialize {first[0]:.2f} s, "
              f"resources/list {first[1]:.2f} s, CPU {first[3]:.2f} s")
        for name, runs in (("cold (nothing kept)", cold), ("warm (tree unchanged)", warm)):
            print(f"  {args.runs} {name} starts: initialize {fmt([r[0] for r in runs])}")
            print(f"    resources/list answered: {fmt([r[1] for r in runs])}")
            print(f"    server CPU (user + system): {fmt([r[3] for r in runs])}")


if __name__ == "__main__":
    main()
