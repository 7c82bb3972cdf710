#!/usr/bin/env python3
"""`add` of 10 skills from 10 separate git repositories (file:// URLs).

Each run starts from a fresh project and an empty cache, so every
repository is cloned and every skill exported and packed. Timed beside the
baseline `git clone --bare` of the same 10 repositories one after another
(the git work a sequential client cannot avoid), interleaved in one run.
With `--compare BIN`, a second skillpm binary (e.g. an older build) is
timed against this one in the same run.

Run: python3 benches/git_add.py [--repos N] [--compare OLD_SKILLPM]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import isolated_env, report, skillpm_bin, time_pair  # noqa: E402
from install import make_skill  # noqa: E402

def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_repo(base, i):
    """The same ~24 KB skill `install.py` publishes, as a git repository."""
    d = make_skill(base, f"skill-{i:03}")
    git("init", "-q", "-b", "main", cwd=d)
    git("add", "-A", cwd=d)
    git("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init", cwd=d)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", type=int, default=10)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--compare", help="another skillpm binary to time beside this one")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="skillpm-git-add-")
    try:
        repos = [make_repo(os.path.join(tmp, "repos"), i) for i in range(args.repos)]
        specs = [f"git+file://{r}" for r in repos]
        env = isolated_env(tmp)
        proj = os.path.join(tmp, "proj")
        clones = os.path.join(tmp, "clones")

        def fresh():
            for p in (proj, env["XDG_CACHE_HOME"], clones):
                shutil.rmtree(p, ignore_errors=True)
            os.makedirs(proj)
            with open(os.path.join(proj, "skills.toml"), "w") as f:
                f.write("[skills]\n")

        new = os.environ.get("SKILLPM_BIN") or skillpm_bin()
        add = lambda b: [b, "-q", "-C", proj, "add", *specs]  # noqa: E731
        clone_all = " && ".join(
            f"git clone -q --bare file://{r} {clones}/{i}" for i, r in enumerate(repos)
        )
        rows = []
        m, b, ratio = time_pair(add(new), clone_all, runs=args.runs, setup_a=fresh,
                                setup_b=fresh, env=env)
        rows.append((f"add {args.repos} git repos", m, "git clone --bare x N", b, ratio))
        if args.compare:
            m, b, ratio = time_pair(add(new), add(args.compare), runs=args.runs,
                                    setup_a=fresh, setup_b=fresh, env=env)
            rows.append((f"add {args.repos} git repos", m, "compared binary", b, ratio))
        report(rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
