#!/usr/bin/env python3
"""`skillpm status --json` on generated trees of 1 000 and 10 000 skills,
against `find ROOT -name SKILL.md -exec cat {} +` on the same tree.

Target (issue 2): 10 000 skills within 3x the find+cat baseline.
Run: python3 benches/status.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import report, skillpm_bin, time_pair  # noqa: E402

SKILL = """---
name: {name}
description: Generated skill number {i} for the status benchmark. Use when testing discovery speed.
version: "1.{i}.0"
license: MIT
allowed-tools: Read Grep
metadata:
  author: bench
requires:
  bins: [sh]
---
# {name}

Instructions for {name}. Read the bundled reference before acting.
"""


def make_tree(base, n):
    root = os.path.join(base, ".agents", "skills")
    for i in range(n):
        group = f"group-{i // 100:03d}"
        name = f"skill-{i:05d}"
        d = os.path.join(root, group, name)
        os.makedirs(os.path.join(d, "scripts"))
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(SKILL.format(name=name, i=i))
        with open(os.path.join(d, "scripts", "run.sh"), "w") as f:
            f.write("#!/bin/sh\necho run\n")
    open(os.path.join(base, "skills.toml"), "w").close()
    return root


def main():
    exe = skillpm_bin()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": os.path.join(tmp, "cfg")}
        for n in (1000, 10000):
            project = os.path.join(tmp, f"p{n}")
            root = make_tree(project, n)
            ours, base, ratio = time_pair(
                [exe, "-C", project, "status", "--json"],
                f"find {root} -name SKILL.md -exec cat {{}} +",
                env=env,
            )
            rows.append((f"status --json, {n} skills", ours, "find+cat", base, ratio))
    report(rows)


if __name__ == "__main__":
    main()
