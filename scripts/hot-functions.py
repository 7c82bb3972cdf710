#!/usr/bin/env python3
"""Writes build/hot-functions.txt: the functions of the release `skillpm`
binary that the common commands execute, which build.rs has the linker lay
out side by side (fewer pages of code faulted in at start, fewer mapped at
exit; see build.rs).

It builds the release binaries, serves 10 generated skills from a git
repository over HTTPS and from `skillpm-registry` (benches/peers.py's
servers), runs each command below once under `valgrind --tool=callgrind`,
and keeps every executed function the binary defines, sorted by name.
Run it again when the toolchain or the dependencies change: the list
names mangled symbols, which change with them (a stale list only costs
the gain). Rebuild afterwards; build.rs relinks when the list changes.

Needs valgrind, nginx, fcgiwrap and openssl (installed with apt-get if
missing).

Run: python3 scripts/hot-functions.py
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "benches"))
import peers  # noqa: E402
from common import isolated_env  # noqa: E402
from install import make_skill  # noqa: E402

OUT = os.path.join(ROOT, "build", "hot-functions.txt")
SKILLS = [f"bench-{i:04d}" for i in range(11)]


def executed(profile, binary):
    """Names of the functions callgrind saw run in `binary`'s object (or
    in one it could not name, "???"; the caller keeps only the names the
    binary defines)."""
    names, objects, functions, current = set(), {}, {}, None
    for line in open(profile, errors="replace"):
        m = re.match(r"(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        kind, key, name = m.groups()
        table = objects if kind.endswith("ob") else functions
        if name:
            table[key] = name
        if kind == "ob":
            current = objects.get(key)
        elif kind == "fn" and current in (binary, "???"):
            names.add(functions.get(key))
    names.discard(None)
    return names


def gone(*paths):
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)


def main():
    peers.ensure_tools()
    if not shutil.which("valgrind"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "valgrind"], check=True)
    subprocess.run(["cargo", "build", "--release", "--workspace", "--quiet"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "skillpm")
    tmp = tempfile.mkdtemp(prefix="skillpm-hot-")
    os.chmod(tmp, 0o755)
    servers = None
    try:
        ca = peers.make_tls(tmp)
        env = isolated_env(tmp)
        env.update(SSL_CERT_FILE=ca, NO_COLOR="1")
        src = os.path.join(tmp, "src")
        for name in SKILLS:
            make_skill(src, name, reference="notes.md")
        peers.make_repo(tmp, src, 10, packed=True)
        os.makedirs(os.path.join(tmp, "composer"))
        servers = peers.Servers(tmp, os.path.join(ROOT, "target", "release", "skillpm-registry"))
        env["SKILLPM_REGISTRY"] = servers.url
        for name in SKILLS:
            peers.sh([exe, "publish", os.path.join(src, name), "--registry", servers.url,
                      "--token", servers.token], env=env)
        repo = f"{servers.url}/git/{peers.VENDOR}/skills-10.git"
        git_p, reg_p = os.path.join(tmp, "git-project"), os.path.join(tmp, "reg-project")
        cache = env["XDG_CACHE_HOME"]
        registry_manifest = "[skills]\n" + "".join(f'{s} = "^1"\n' for s in SKILLS[:10])
        runs = [
            (git_p, lambda: peers.write(os.path.join(git_p, "skills.toml"), "[skills]\n"),
             ["add", "--all", f"git+{repo}"]),
            (git_p, lambda: gone(os.path.join(git_p, ".agents"), cache), ["install", "--locked"]),
            (git_p, lambda: gone(os.path.join(git_p, ".agents")), ["install", "--locked"]),
            (git_p, lambda: None, ["install", "--locked"]),
            (reg_p, lambda: (gone(cache), peers.write(os.path.join(reg_p, "skills.toml"),
                                                      registry_manifest)), ["install"]),
            (reg_p, lambda: gone(os.path.join(reg_p, ".agents"), cache), ["install", "--locked"]),
            (reg_p, lambda: None, ["add", f"{SKILLS[10]}@^1"]),
            (reg_p, lambda: None, ["status"]),
        ]
        profiles = os.path.join(tmp, "callgrind")
        os.makedirs(profiles)
        for i, (cwd, setup, args) in enumerate(runs):
            setup()
            out = os.path.join(profiles, f"{i}.%p")
            subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no",
                            f"--callgrind-out-file={out}", exe, "-q", *args],
                           cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        names = set()
        for profile in glob.glob(os.path.join(profiles, "*")):
            names |= executed(profile, exe)
        defined = set(subprocess.run(["nm", "--defined-only", "--format=just-symbols", exe],
                                     capture_output=True, text=True, check=True).stdout.split())
        names &= defined
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w") as f:
            f.write("# Written by scripts/hot-functions.py; read by build.rs.\n")
            f.writelines(n + "\n" for n in sorted(names))
        print(f"{len(names)} functions written to {os.path.relpath(OUT, ROOT)}", file=sys.stderr)
    finally:
        if servers:
            servers.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
