#!/usr/bin/env python3
"""Registry dependencies (issue 47): how many round trips a cold `add` of
a dependency graph waits for, and what re-solving a warm graph costs.

Graphs of registry packages, generated as deps.py's (fixed seed; each
package needs 2 or 3 of the next level with `^1`, every package reached,
diamonds), each package published in two versions (1.0.0 and 1.1.0, so
the solver has a choice), bottom level first, to a real `skillpm-registry`
on loopback:
  200 skills in 4 levels (8 / 20 / 50 / 122)
  200 skills in 2 levels (60 / 140)
  1 000 skills in 4 levels (40 / 120 / 280 / 560)

The registry sits behind nginx (TLS, HTTP/2, as peers.py serves it, with a
CA made for the run), and nginx reaches it through a proxy on loopback
that holds every chunk the registry sends for DELAY (default 50 ms)
before passing it on, as a link with that much latency would. The proxy
notes when each request arrives; requests that arrive more than DELAY/2
after the one before start a new wave, so the waves are the round trips
the client waited for.

Scenarios per graph, fresh project and empty cache each time:
  cold add, no delay       `add` of the level-0 packages
  cold add, DELAY          the same through the delayed proxy: requests,
                           waves, and (time - time without delay) / DELAY
Then, for the 1 000-skill graph with nothing delayed and the index warm:
  update                   every index read again (conditional requests),
                           the whole graph solved, nothing changes
  no-op install            the lock taken as it is
their difference is what re-solving from a warm index costs, requests
and all. The solver alone on the same 1 000-skill shape, with both
versions of every package offered, is timed by
`examples/solve_graph.rs` (median of 21 solves).

Run: python3 benches/deps_registry.py [--delay MS] [--runs N] [--quick]
"""
import argparse
import asyncio
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, isolated_env, skillpm_bin  # noqa: E402
from deps import graph  # noqa: E402
from peers import Servers, ensure_tools, make_tls  # noqa: E402

SEED = 47
GRAPHS = [("4 levels", "d", [8, 20, 50, 122]),
          ("2 levels", "w", [60, 140]),
          ("4 levels", "k", [40, 120, 280, 560])]
REQUEST = re.compile(rb"(?:GET|HEAD|POST|PUT) /")


class DelayProxy:
    """TCP proxy on loopback: registry-to-client chunks are held for
    `delay` seconds, in order; request arrival times are recorded."""

    def __init__(self):
        self.delay = 0.0
        self.upstream = None
        self.arrivals = []
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait()

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._conn, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _conn(self, creader, cwriter):
        try:
            sreader, swriter = await asyncio.open_connection(*self.upstream)
        except OSError:
            cwriter.close()
            return
        queue = asyncio.Queue()

        async def up():
            while data := await creader.read(65536):
                now = time.perf_counter()
                self.arrivals.extend(now for _ in REQUEST.finditer(data))
                swriter.write(data)
                await swriter.drain()
            swriter.close()

        async def down():
            while data := await sreader.read(65536):
                await queue.put((time.perf_counter() + self.delay, data))
            await queue.put((time.perf_counter() + self.delay, None))

        async def deliver():
            while True:
                due, data = await queue.get()
                wait = due - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
                if data is None:
                    break
                cwriter.write(data)
                await cwriter.drain()
            cwriter.close()

        await asyncio.gather(up(), down(), deliver(), return_exceptions=True)

    def waves(self):
        """Requests, and runs of them separated by more than delay/2."""
        times = sorted(self.arrivals)
        gaps = sum(1 for a, b in zip(times, times[1:]) if b - a > self.delay / 2)
        return len(times), (gaps + 1 if times else 0)


def publish_graph(skillpm, env, src, url, token, names, deps):
    """Every package in two versions, the deepest level first (a package
    may only name published ones); a level's packages in parallel."""
    def one(name, version):
        d = os.path.join(src, f"{name}-{version}", name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(f"---\nname: {name}\ndescription: Benchmark package {name}.\n"
                    f"metadata:\n  version: \"{version}\"\n---\n{name} {version}\n")
        with open(os.path.join(d, "skill.toml"), "w") as f:
            f.write("[dependencies]\n" + "".join(f'{c} = "^1"\n' for c in deps[name]))
        subprocess.run([skillpm, "publish", d, "--registry", url, "--token", token],
                       env=env, check=True, capture_output=True)
    with ThreadPoolExecutor(4) as pool:
        for level in reversed(names):
            list(pool.map(lambda a: one(*a), [(n, v) for n in level for v in ("1.0.0", "1.1.0")]))


def cold_add(skillpm, env, tmp, roots):
    project = os.path.join(tmp, "project")
    shutil.rmtree(project, ignore_errors=True)
    shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
    os.makedirs(project)
    subprocess.run([skillpm, "-C", project, "init", "-q"], env=env, check=True,
                   capture_output=True)
    start = time.perf_counter()
    subprocess.run([skillpm, "-C", project, "add", "-q", *roots], env=env, check=True,
                   capture_output=True)
    return time.perf_counter() - start, project


def timed(cmd, env, runs):
    samples = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples[1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=50, help="ms added to every response")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the 200-skill graphs only")
    args = ap.parse_args()
    delay = args.delay / 1000
    skillpm = skillpm_bin()
    registry = os.path.join(ROOT, "target", "release", "skillpm-registry")
    graphs = GRAPHS[:2] if args.quick else GRAPHS
    rows, resolve_rows = [], []
    ensure_tools()
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        env = isolated_env(tmp)
        env["SSL_CERT_FILE"] = make_tls(tmp)
        proxy = DelayProxy()

        def via(addr):
            host, port = addr.rsplit(":", 1)
            proxy.upstream = (host, int(port))
            return f"127.0.0.1:{proxy.port}"
        servers = Servers(tmp, registry, registry_via=via)
        url, token = servers.url, servers.token
        env["SKILLPM_REGISTRY"] = url
        try:
            for label, prefix, levels in graphs:
                names, deps = graph(prefix, levels, random.Random(SEED))
                t = time.perf_counter()
                publish_graph(skillpm, env, os.path.join(tmp, "src"), url, token, names, deps)
                print(f"published {sum(levels)} packages x2 in {time.perf_counter() - t:.0f} s",
                      file=sys.stderr)
                plain, delayed, counted = [], [], None
                for _ in range(args.runs):
                    proxy.delay = 0.0
                    plain.append(cold_add(skillpm, env, tmp, names[0])[0])
                    proxy.delay, proxy.arrivals = delay, []
                    took, project = cold_add(skillpm, env, tmp, names[0])
                    delayed.append(took)
                    counted = proxy.waves()
                    installed = len(os.listdir(os.path.join(project, ".agents", "skills")))
                    assert installed >= sum(levels), f"{installed} of {sum(levels)} installed"
                proxy.delay = 0.0
                t0, td = statistics.median(plain), statistics.median(delayed)
                rows.append((f"{sum(levels)} skills, {label} ({'/'.join(map(str, levels))})",
                             counted[0], counted[1], (td - t0) / delay, t0, td))
                if sum(levels) >= 1000:
                    upd = timed([skillpm, "-C", project, "update", "-q"], env, args.runs * 3)
                    noop = timed([skillpm, "-C", project, "install", "-q"], env, args.runs * 3)
                    resolve_rows.append((sum(levels), upd, noop))
        finally:
            servers.stop()
    print(f"\ncold add of the level-0 packages, {args.delay:.0f} ms added to each response "
          f"(medians of {args.runs})")
    print("| graph | requests | waves | (delayed - plain) / delay | plain | delayed |")
    print("|---|---:|---:|---:|---:|---:|")
    for g, req, waves, est, t0, td in rows:
        print(f"| {g} | {req} | {waves} | {est:.1f} | {t0 * 1000:.0f} ms | {td * 1000:.0f} ms |")
    for n, upd, noop in resolve_rows:
        print(f"\n{n} skills, index warm, nothing delayed (medians of {args.runs * 3})")
        print("| command | time |\n|---|---:|")
        print(f"| update (every index revalidated, whole graph solved, no change) | "
              f"{upd * 1000:.1f} ms |")
        print(f"| no-op install (lock as it is) | {noop * 1000:.1f} ms |")
        print(f"| difference | {(upd - noop) * 1000:.1f} ms |")
    solver = subprocess.run(["cargo", "run", "--release", "--quiet", "--example", "solve_graph"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    print(f"\nsolver alone: {solver}")


if __name__ == "__main__":
    main()
