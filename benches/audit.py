#!/usr/bin/env python3
"""The audit's cost (issue 48): `skillpm audit` over 1 000 skills, and
what the install gate adds to a cold install of 100.

Skills are install.py's (~24 KB each: SKILL.md, a script, a reference).
  audit 1 000      `skillpm audit DIR` over 1 000 skills, beside
                   `grep -rlE 'curl|base64'` over the same tree (reading
                   every file once)
  gate, 100        a cold restore of 100 registry skills
                   (`install --locked`, empty cache, no tree), beside the
                   same restore with the gate's work done again on its
                   own: `skillpm audit` of the 100 installed skills. The
                   gate scans the same trees on the same pool, so the
                   second figure over the first is what it adds.
  gate, A/B        with --without-gate EXE (the same commit built with
                   the scan call in src/install/prepare.rs::stage removed,
                   or a build from before the gate, e.g. 25434ba): the
                   same cold restore by both, interleaved; the ratio is
                   what the gate costs.
  real             with --real DIR: `skillpm audit DIR` over real
                   collections (each a checkout under DIR), skills counted.
Run: python3 benches/audit.py [--runs N] [--real DIR] [--without-gate EXE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import isolated_env, report, skillpm_bin, time_cmd, time_pair  # noqa: E402
from install import make_skill, start_registry  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--real", help="a directory of checked-out collections")
    ap.add_argument("--without-gate", help="a skillpm binary from before the install gate")
    args = ap.parse_args()
    exe = skillpm_bin()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = isolated_env(tmp)
        tree = os.path.join(tmp, "thousand")
        for i in range(1000):
            make_skill(tree, f"bench-{i:04d}")
        # audit exits 1 when findings stand; these skills have none.
        a, b, r = time_pair([exe, "audit", tree], f"grep -rlE 'curl|base64' {tree} || true",
                            runs=args.runs, env=env)
        rows.append(("audit, 1 000 skills", a, "grep -r", b, r))

        proc, url, token = start_registry(os.path.join(tmp, "data"))
        env["SKILLPM_REGISTRY"] = url
        try:
            src = os.path.join(tmp, "src")
            for i in range(100):
                d = make_skill(src, f"gate-{i:04d}")
                subprocess.run([exe, "publish", d, "--registry", url, "--token", token],
                               env=env, check=True, capture_output=True)
            project = os.path.join(tmp, "p100")
            os.makedirs(project)
            with open(os.path.join(project, "skills.toml"), "w") as f:
                f.write("[skills]\n" + "".join(f'gate-{i:04d} = "^1"\n' for i in range(100)))
            subprocess.run([exe, "-C", project, "install", "-q"], env=env, check=True)
            installed = os.path.join(project, ".agents", "skills")
            cache = env["XDG_CACHE_HOME"]

            def cold():
                shutil.rmtree(installed, ignore_errors=True)
                shutil.rmtree(cache, ignore_errors=True)

            install = [exe, "-C", project, "install", "--locked", "-q"]
            audit = [exe, "-C", project, "audit"]
            samples_i, samples_a = [], []
            for i in range(args.runs + 1):
                cold()
                t = time.perf_counter()
                subprocess.run(install, env=env, check=True, capture_output=True)
                ti = time.perf_counter() - t
                t = time.perf_counter()
                subprocess.run(audit, env=env, check=True, capture_output=True)
                ta = time.perf_counter() - t
                if i:
                    samples_i.append(ti)
                    samples_a.append(ta)
            samples_i.sort()
            samples_a.sort()
            mi, ma = samples_i[len(samples_i) // 2], samples_a[len(samples_a) // 2]
            rows.append(("gate, 100: audit of what was installed", ma,
                         "cold install --locked", mi, ma / mi))
            if args.without_gate:
                before = [args.without_gate] + install[1:]
                a, b, r = time_pair(install, before, runs=args.runs, setup_a=cold, setup_b=cold,
                                    env=env)
                rows.append(("gate, 100: cold install --locked", a, "before the gate", b, r))
        finally:
            proc.terminate()
            proc.wait()
        if args.real:
            found = subprocess.run([exe, "audit", "--format", "json", args.real], env=env,
                                   capture_output=True, text=True)
            skills = len(json.loads(found.stdout)["skills"])
            # Real collections hold findings: audit exits 1 on them.
            t = time_cmd(f"{exe} audit {args.real} || true", runs=3, env=env, shell=True)[0]
            print(f"real collections: {skills} skills audited in {t * 1000:.0f} ms (median of 3)")
    report(rows)


if __name__ == "__main__":
    main()
