"""Shared helpers for skillpm's whole-process benchmarks.

Each benchmark times real commands as whole processes, several runs after a
warm-up, and reports medians and the ratio to a baseline measured in the same
run, so figures hold when the machine's speed drifts.
"""
import json
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def skillpm_bin():
    """Builds the release binaries once and returns the skillpm path."""
    subprocess.run(
        ["cargo", "build", "--release", "--workspace", "--quiet"], cwd=ROOT, check=True
    )
    return os.path.join(ROOT, "target", "release", "skillpm")


def time_cmd(cmd, runs=7, warmup=1, env=None, cwd=None, setup=None, shell=False):
    """Median wall seconds of `cmd` over `runs` runs; `setup` runs before each."""
    samples = []
    for i in range(warmup + runs):
        if setup:
            setup()
        start = time.perf_counter()
        subprocess.run(
            cmd,
            env=env,
            cwd=cwd,
            shell=shell,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        elapsed = time.perf_counter() - start
        if i >= warmup:
            samples.append(elapsed)
    return statistics.median(samples), min(samples), max(samples)


def time_pair(a, b, runs=7, warmup=1, setup_a=None, setup_b=None, env=None,
              cwd_a=None, cwd_b=None):
    """Times `a` and `b` in turn (A B A B ...), so drift in the machine's
    speed hits both alike. Returns (median_a, median_b, median of a/b)."""
    sa, sb, ratios = [], [], []
    for i in range(warmup + runs):
        pair = []
        for cmd, setup, cwd in ((a, setup_a, cwd_a), (b, setup_b, cwd_b)):
            if setup:
                setup()
            shell = isinstance(cmd, str)
            start = time.perf_counter()
            subprocess.run(cmd, env=env, shell=shell, cwd=cwd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            pair.append(time.perf_counter() - start)
        if i >= warmup:
            sa.append(pair[0])
            sb.append(pair[1])
            ratios.append(pair[0] / pair[1])
    return statistics.median(sa), statistics.median(sb), statistics.median(ratios)


def report(rows):
    """Prints rows of (label, median, baseline_label, baseline_median[, ratio])."""
    print(f"{'case':<44} {'median':>10} {'baseline':>28} {'ratio':>7}")
    for row in rows:
        label, med, base_label, base = row[:4]
        ratio = row[4] if len(row) > 4 else (med / base if base else float("nan"))
        print(f"{label:<44} {med*1000:>8.1f}ms {base_label:>18} {base*1000:>7.1f}ms {ratio:>6.2f}x")


def isolated_env(tmp, cache=True):
    """An environment that keeps skillpm's config (and cache) inside `tmp`,
    so a benchmark never reads or writes the user's."""
    env = dict(
        HOME=os.path.join(tmp, "home"),
        XDG_CONFIG_HOME=os.path.join(tmp, "cfg"),
        PATH=os.environ.get("PATH", "/usr/bin:/bin"),
    )
    if cache:
        env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
    os.makedirs(env["HOME"], exist_ok=True)
    return env


def line_rpc(p):
    """JSON-RPC on a process's stdin and stdout, one JSON line each way
    (MCP's stdio transport): returns `rpc(method, params=None, note=False)`,
    which answers with the raw response line, or None for a notification."""
    ids = iter(range(1, 1 << 30))

    def rpc(method, params=None, note=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not note:
            msg["id"] = next(ids)
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        return None if note else p.stdout.readline()

    return rpc
