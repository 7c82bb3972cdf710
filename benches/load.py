#!/usr/bin/env python3
"""Load (issue 5): many clients installing from one registry at once.

One release `skillpm-registry` on loopback with 100 small skills; 64
`skillpm install` processes started together, each with its own project
(a skills.toml listing all 100) and its own empty cache, so every client
fetches every index and downloads every tarball. Checks that every install
succeeded with the same lock, then prints the per-client wall time
(p50 / p90 / p99 / max, nearest rank) and the registry's request rate
over the whole run.

Each client makes 1 + 2 * SKILLS requests: GET /config.json once, GET
/index/NAME and one download per skill (counted through a proxy once;
the index is fetched at most once per run and nothing is retried when all
goes well).

Run: python3 benches/load.py [clients] [skills] [rounds]
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import isolated_env, skillpm_bin  # noqa: E402
from install import start_registry  # noqa: E402


def make_small_skill(base, name, i):
    """The same skill the load test (tests/it/load.rs) publishes."""
    d = os.path.join(base, name)
    os.makedirs(d)
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: Load-test skill number {i}.\n"
                f"version: \"1.0.{i}\"\n---\n")
        f.write(f"Step {i}: do the thing.\n" * 40)
    return d


def nearest_rank(sorted_xs, p):
    rank = max(1, min(len(sorted_xs), -(-len(sorted_xs) * p // 100)))
    return sorted_xs[int(rank) - 1]


def cpu_of(pid):
    """User and system CPU seconds a live process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def one_round(exe, env, tmp, clients, manifest):
    base = os.path.join(tmp, f"round-{time.monotonic_ns()}")
    projects = []
    for c in range(clients):
        project = os.path.join(base, f"p{c:02}")
        os.makedirs(project)
        with open(os.path.join(project, "skills.toml"), "w") as f:
            f.write(manifest)
        projects.append((project, os.path.join(base, f"cache{c:02}")))
    times = [None] * clients
    codes = [None] * clients
    errors = [""] * clients
    barrier = threading.Barrier(clients)

    def client(c):
        project, cache = projects[c]
        cenv = dict(env, XDG_CACHE_HOME=cache)
        barrier.wait()
        start = time.perf_counter()
        p = subprocess.run([exe, "-C", project, "install", "-q"], env=cenv,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times[c] = time.perf_counter() - start
        codes[c] = p.returncode
        errors[c] = p.stderr

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    wall_start = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - wall_start
    failed = [(c, errors[c].strip()) for c in range(clients) if codes[c] != 0]
    if failed:
        for c, e in failed[:5]:
            print(f"client {c} failed: {e}", file=sys.stderr)
        raise SystemExit(f"{len(failed)} of {clients} installs failed")
    locks = {open(os.path.join(p, "skills.lock")).read() for p, _ in projects}
    if len(locks) != 1:
        raise SystemExit(f"{len(locks)} different locks")
    shutil.rmtree(base, ignore_errors=True)
    return sorted(times), wall


def main():
    clients = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    skills = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    exe = skillpm_bin()
    with tempfile.TemporaryDirectory() as tmp:
        # Each client gets its own cache below (XDG_CACHE_HOME per client).
        env = isolated_env(tmp, cache=False)
        proc, url, token = start_registry(os.path.join(tmp, "data"))
        env["SKILLPM_REGISTRY"] = url
        try:
            src = os.path.join(tmp, "src")
            names = []
            for i in range(skills):
                name = f"load-{i:03d}"
                d = make_small_skill(src, name, i)
                subprocess.run([exe, "publish", d, "--token", token], env=env, check=True,
                               capture_output=True)
                names.append(name)
            manifest = "[skills]\n" + "".join(f'{n} = "^1"\n' for n in names)
            requests = clients * (1 + 2 * skills)
            print(f"{clients} concurrent `skillpm install` clients x {skills} skills, "
                  f"one registry, empty caches, {os.cpu_count()} CPUs")
            print(f"{'round':<6} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8} {'total':>8} {'req/s':>8}"
                  f" {'server cpu':>14} {'clients cpu':>15}")
            for r in range(rounds):
                su, ss = cpu_of(proc.pid)
                cu = resource.getrusage(resource.RUSAGE_CHILDREN)
                times, wall = one_round(exe, env, tmp, clients, manifest)
                su2, ss2 = cpu_of(proc.pid)
                cu2 = resource.getrusage(resource.RUSAGE_CHILDREN)
                print(f"{r + 1:<6} {nearest_rank(times, 50):>7.2f}s {nearest_rank(times, 90):>7.2f}s "
                      f"{nearest_rank(times, 99):>7.2f}s {times[-1]:>7.2f}s {wall:>7.2f}s "
                      f"{requests / wall:>8.0f} "
                      f"{su2 - su:>5.1f}u+{ss2 - ss:>5.1f}s "
                      f"{cu2.ru_utime - cu.ru_utime:>6.1f}u+{cu2.ru_stime - cu.ru_stime:>5.1f}s")
            print(f"({requests} requests per round: {clients} x (config.json + {skills} index "
                  f"+ {skills} downloads); no errors. cpu: seconds of user+system time "
                  f"used by the registry and by all clients together during the round)")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
