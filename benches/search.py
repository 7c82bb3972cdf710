#!/usr/bin/env python3
"""Local search over 10 000 generated skills.

1. Cold: `skillpm search --local QUERY --json` as a whole process against
   `skillpm status --json` on the same tree (both discover, parse and
   evaluate every skill; search also builds the index and ranks).
   Target (issue 12): within 3x.
2. Warm: the index built once in-process (as `skillpm mcp` keeps it), then
   200 queries x 10 rounds timed one by one (examples/search_warm.rs).
   Target: p99 under 5 ms.

Skills carry triggers as real collections do: keywords and verbs on every
skill, trigger phrases on half, a regex pattern on one in ten.
Run: python3 benches/search.py
"""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, report, skillpm_bin, time_pair  # noqa: E402

WORDS = """pdf form invoice table chart deploy docker kubernetes review diff test
lint format commit rebase merge branch release notes changelog translate summarize
email calendar meeting slide spreadsheet database query migrate schema backup
restore monitor alert log trace profile benchmark cache index search crawl scrape
image resize crop video audio transcribe upload download archive compress encrypt
sign verify token secret vault config yaml json csv markdown html render template
""".split()
VERBS = "fill extract convert deploy review merge draft translate summarize migrate".split()

SKILL = """---
name: {name}
description: {description}
version: "1.{i}.0"
allowed-tools: Read Grep
requires:
  bins: [sh]
triggers:
{triggers}
---
# {name}

{body}
"""


def make_tree(base, n):
    rng = random.Random(12)
    root = os.path.join(base, ".agents", "skills")
    for i in range(n):
        name = f"skill-{i:05d}"
        d = os.path.join(root, f"group-{i // 100:03d}", name)
        os.makedirs(d)
        topic = rng.sample(WORDS, 4)
        description = (
            f"{topic[0].capitalize()} and {topic[1]} helper number {i}. "
            f"Use when the user works with {topic[2]} or {topic[3]} files."
        )
        triggers = [
            f"  keywords: [{topic[0]}, {topic[1]}]",
            f"  verbs: [{rng.choice(VERBS)}]",
        ]
        if i % 2 == 0:
            triggers.append(f"  phrases: [\"{rng.choice(VERBS)} the {topic[2]}\"]")
        if i % 10 == 0:
            triggers.append(f"  patterns: ['\\b{topic[3]}-\\d+\\b']")
        body = " ".join(rng.choice(WORDS) for _ in range(120))
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(SKILL.format(name=name, i=i, description=description,
                                 triggers="\n".join(triggers), body=body))
    open(os.path.join(base, "skills.toml"), "w").close()
    return root


def queries(count):
    rng = random.Random(7)
    out = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append(f"please {rng.choice(VERBS)} the {rng.choice(WORDS)} for me")
        elif kind == 1:
            out.append(f"use skill-{rng.randrange(10000):05d} on this")
        elif kind == 2:
            out.append(" ".join(rng.choice(WORDS) for _ in range(6)))
        else:
            out.append(f"what is wrong with {rng.choice(WORDS)}-{rng.randrange(100)} today")
    return out


def main():
    exe = skillpm_bin()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "search_warm"],
                   cwd=ROOT, check=True)
    warm_exe = os.path.join(ROOT, "target", "release", "examples", "search_warm")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": os.path.join(tmp, "cfg")}
        n = 10000
        project = os.path.join(tmp, "p")
        root = make_tree(project, n)
        q = "please fill the invoice form and review the diff"
        ours, base, ratio = time_pair(
            [exe, "-C", project, "search", "--local", q, "--json"],
            [exe, "-C", project, "status", "--json"],
            env=env,
        )
        rows.append((f"search --local, {n} skills (cold)", ours, "status --json", base, ratio))
        report(rows)

        qfile = os.path.join(tmp, "queries.txt")
        with open(qfile, "w") as f:
            f.write("\n".join(queries(200)) + "\n")
        out = subprocess.run([warm_exe, root, qfile, "10"], check=True,
                             capture_output=True, text=True).stdout
        warm = json.loads(out)
        print(f"\nwarm search, {warm['skills']} skills, index built once in "
              f"{warm['build_ms']:.1f} ms (discovery + parse + index):")
        print(f"  {warm['queries']} queries: p50 {warm['p50_ms']:.3f} ms, "
              f"p99 {warm['p99_ms']:.3f} ms, max {warm['max_ms']:.3f} ms "
              f"(target p99 < 5 ms)")


if __name__ == "__main__":
    main()
