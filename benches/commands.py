#!/usr/bin/env python3
"""`skillpm commands` and `skillpm doctor` against `skillpm status` on the
same generated tree of 1 000 skills (status.py's tree, with every tenth
skill needing a binary that is not there and declaring an npm installer
for it, so `doctor` has 100 skills to diagnose).

Target (issue 49): `commands` and `doctor` within 1.2x of `status`; both
come from the catalogue `status` builds, with no file read of their own.
Run: python3 benches/commands.py (SKILLPM_BENCH_BIN names a built binary
instead of building the workspace).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import report, skillpm_bin, time_pair  # noqa: E402
from status import make_tree  # noqa: E402


INSTALL = (
    'metadata: {"openclaw": {"install": [{"kind": "node", "package": "tool-N@1.0.0", '
    '"bins": ["tool-N"]}, {"kind": "brew", "formula": "tool-N", "bins": ["tool-N"]}]}}\n'
)


def break_every_tenth(root):
    """Every tenth skill needs `tool-N`, which is not on PATH, and says
    how to install it."""
    i = 0
    for group in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, group))):
            if i % 10 == 0:
                path = os.path.join(root, group, name, "SKILL.md")
                with open(path) as f:
                    text = f.read()
                text = text.replace("  bins: [sh]\n", f"  bins: [tool-{i}]\n", 1)
                text = text.replace("metadata:\n  author: bench\n", INSTALL.replace("N", str(i)), 1)
                with open(path, "w") as f:
                    f.write(text)
            i += 1


def main():
    exe = os.environ.get("SKILLPM_BENCH_BIN") or skillpm_bin()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": os.path.join(tmp, "cfg")}
        project = os.path.join(tmp, "p")
        root = make_tree(project, 1000)
        break_every_tenth(root)
        for command in ("commands", "doctor"):
            for flags in (["--json"], []):
                ours, base, ratio = time_pair(
                    [exe, "-C", project, command, *flags],
                    [exe, "-C", project, "status", *flags],
                    runs=15,
                    env=env,
                )
                label = " ".join([command, *flags]) + ", 1 000 skills"
                rows.append((label, ours, "status " + " ".join(flags), base, ratio))
    report(rows)


if __name__ == "__main__":
    main()
