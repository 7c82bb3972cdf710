#!/usr/bin/env python3
"""`skillpm commands` against `skillpm status` on the same generated tree
of 1 000 skills (status.py's tree).

Target (issue 49): `commands` within 1.2x of `status`; the table comes from
the catalogue `status` builds, with no file read of its own.
Run: python3 benches/commands.py (SKILLPM_BENCH_BIN names a built binary
instead of building the workspace).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import report, skillpm_bin, time_pair  # noqa: E402
from status import make_tree  # noqa: E402


def main():
    exe = os.environ.get("SKILLPM_BENCH_BIN") or skillpm_bin()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": os.path.join(tmp, "cfg")}
        project = os.path.join(tmp, "p")
        make_tree(project, 1000)
        for flags in (["--json"], []):
            ours, base, ratio = time_pair(
                [exe, "-C", project, "commands", *flags],
                [exe, "-C", project, "status", *flags],
                runs=15,
                env=env,
            )
            label = " ".join(["commands", *flags]) + ", 1 000 skills"
            rows.append((label, ours, "status " + " ".join(flags), base, ratio))
    report(rows)


if __name__ == "__main__":
    main()
