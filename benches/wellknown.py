#!/usr/bin/env python3
"""Issue 13 figures: multi-skill git repositories and well-known indexes.

1. `add --all` of a git repository holding N skills (default 100, laid out
   like the public collections: skills/, skills/.curated/, .claude/skills/,
   nested directories), from a fresh project and an empty cache each run,
   beside the baseline `git clone --bare` of that repository. One extra run
   with a logging `git` counts the fetches (must be 1).
2. `install --locked` of N archive skills from a well-known index, cold
   (empty cache, nothing installed) and warm (cache kept, nothing
   installed), beside the same N skills installed from skillpm-registry's
   own protocol (`/index/NAME` + download), both served by one
   `skillpm-registry` on loopback (its `/.well-known/agent-skills/index.json`
   is the index), so only the client path differs. A third row serves the
   same tarballs and an index from a static server (Python's threaded
   http.server) for the cold case.

Run: python3 benches/wellknown.py [--skills N] [--runs R]
"""
import argparse
import functools
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import isolated_env, report, skillpm_bin, time_pair  # noqa: E402
from install import make_skill, start_registry  # noqa: E402

LAYOUTS = ["skills/{}", "skills/.curated/{}", ".claude/skills/{}", "skills/group/nested/{}"]


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=cwd,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_collection(base, n):
    """One repository with n skills (the ~24 KB skill of install.py)."""
    repo = os.path.join(base, "collection")
    for i in range(n):
        rel = LAYOUTS[i % len(LAYOUTS)].format(f"skill-{i:03}")
        parent = os.path.join(repo, os.path.dirname(rel))
        os.makedirs(parent, exist_ok=True)
        make_skill(parent, os.path.basename(rel))
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "skills", cwd=repo)
    return repo


def count_fetches(exe, repo, tmp):
    """Runs `add --all` once with a logging git; returns the fetch count."""
    bindir = os.path.join(tmp, "logbin")
    os.makedirs(bindir, exist_ok=True)
    log = os.path.join(tmp, "git.log")
    real = shutil.which("git")
    with open(os.path.join(bindir, "git"), "w") as f:
        f.write(f"#!/bin/sh\necho \"$*\" >> '{log}'\nexec '{real}' \"$@\"\n")
    os.chmod(os.path.join(bindir, "git"), 0o755)
    env = isolated_env(os.path.join(tmp, "count"))
    env["PATH"] = bindir + os.pathsep + env["PATH"]
    proj = os.path.join(tmp, "count-proj")
    os.makedirs(proj)
    subprocess.run([exe, "-q", "-C", proj, "add", f"git+file://{repo}", "--all"], env=env,
                   check=True)
    with open(log) as f:
        return sum(1 for line in f if "fetch" in line.split())


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def static_site(root):
    """Serves `root` on 127.0.0.1 from a thread; returns (server, url)."""
    handler = functools.partial(Quiet, directory=root)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skills", type=int, default=100)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--part", choices=["all", "git", "wellknown"], default="all")
    args = ap.parse_args()
    n = args.skills
    exe = os.environ.get("SKILLPM_BIN") or skillpm_bin()
    tmp = tempfile.mkdtemp(prefix="skillpm-wellknown-")
    rows = []
    try:
        env = isolated_env(tmp)
        if args.part in ("all", "git"):
            rows.append(bench_add_all(exe, n, tmp, env, args.runs))
        if args.part in ("all", "wellknown"):
            rows += bench_wellknown(exe, n, tmp, env, args.runs)
        report(rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_add_all(exe, n, tmp, env, runs):
    """`add --all` of an n-skill repository vs `git clone --bare` of it."""
    repo = make_collection(os.path.join(tmp, "repos"), n)
    fetches = count_fetches(exe, repo, tmp)
    proj = os.path.join(tmp, "proj")
    clone = os.path.join(tmp, "clone")

    def fresh():
        for p in (proj, env["XDG_CACHE_HOME"], clone):
            shutil.rmtree(p, ignore_errors=True)
        os.makedirs(proj)

    m, b, ratio = time_pair([exe, "-q", "-C", proj, "add", f"git+file://{repo}", "--all"],
                            ["git", "clone", "-q", "--bare", f"file://{repo}", clone],
                            runs=runs, setup_a=fresh, setup_b=fresh, env=env)
    return (f"add --all, {n}-skill repo ({fetches} fetch)", m, "git clone --bare", b, ratio)


def bench_wellknown(exe, n, tmp, env, runs):
    """n archive skills: well-known index vs registry protocol, cold and warm."""
    rows = []
    data = os.path.join(tmp, "data")
    proc, url, token = start_registry(data)
    try:
        src = os.path.join(tmp, "src")
        site = os.path.join(tmp, "site")
        os.makedirs(os.path.join(site, ".well-known", "agent-skills"))
        entries = []
        for i in range(n):
            name = f"wk-{i:03}"
            d = make_skill(src, name)
            subprocess.run([exe, "publish", d, "--registry", url, "--token", token],
                           env=env, check=True, capture_output=True)
            tarball = os.path.join(site, "archives", f"{name}.tar.gz")
            os.makedirs(os.path.dirname(tarball), exist_ok=True)
            subprocess.run([exe, "pack", d, "-o", tarball], env=env, check=True,
                           capture_output=True)
            digest = hashlib.sha256(open(tarball, "rb").read()).hexdigest()
            entries.append({"name": name, "type": "archive",
                            "description": f"Benchmark skill {name}.",
                            "url": f"../../archives/{name}.tar.gz",
                            "digest": f"sha256:{digest}"})
        with open(os.path.join(site, ".well-known", "agent-skills", "index.json"), "w") as f:
            json.dump({"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
                       "skills": entries}, f)
        srv, site_url = static_site(site)
        env_r = dict(env, SKILLPM_REGISTRY=url)
        projects = {}
        for kind, entry in (
            ("wk", lambda name: f'{{ wellknown = "{url}/.well-known/agent-skills/index.json" }}'),
            ("site", lambda name: f'{{ wellknown = "{site_url}/.well-known/agent-skills/index.json" }}'),
            ("reg", lambda name: '"^1"'),
        ):
            p = os.path.join(tmp, f"p-{kind}")
            os.makedirs(p)
            with open(os.path.join(p, "skills.toml"), "w") as f:
                f.write("[skills]\n")
                for i in range(n):
                    f.write(f"wk-{i:03} = {entry(f'wk-{i:03}')}\n")
            subprocess.run([exe, "-q", "-C", p, "install"], env=env_r, check=True)
            projects[kind] = p
        cache = env["XDG_CACHE_HOME"]

        def install(kind):
            return [exe, "-q", "-C", projects[kind], "install", "--locked"]

        def rm_tree(kind):
            return lambda: shutil.rmtree(os.path.join(projects[kind], ".agents"),
                                         ignore_errors=True)

        def rm_all(kind):
            def go():
                rm_tree(kind)()
                shutil.rmtree(cache, ignore_errors=True)
            return go

        cold = time_pair(install("wk"), install("reg"), runs=runs,
                         setup_a=rm_all("wk"), setup_b=rm_all("reg"), env=env_r)
        warm = time_pair(install("wk"), install("reg"), runs=runs,
                         setup_a=rm_tree("wk"), setup_b=rm_tree("reg"), env=env_r)
        site_cold = time_pair(install("site"), install("reg"), runs=runs,
                              setup_a=rm_all("site"), setup_b=rm_all("reg"), env=env_r)
        rows += [
            (f"{n} well-known archives, cold", cold[0], "registry protocol", cold[1],
             cold[2]),
            (f"{n} well-known archives, warm cache", warm[0], "registry protocol", warm[1],
             warm[2]),
            (f"{n} static-site archives, cold", site_cold[0], "registry protocol",
             site_cold[1], site_cold[2]),
        ]
        srv.shutdown()
    finally:
        proc.terminate()
        proc.wait()
    return rows


if __name__ == "__main__":
    main()
