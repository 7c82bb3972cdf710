#!/usr/bin/env python3
"""Install benchmarks (issue 4) against a real registry on loopback.

Generated registries of 10, 100 and 1 000 skills (each ~24 KB: SKILL.md, a
script, a reference file). For each size, in one run:
  cold restore   rm cache + installed tree; `skillpm install --locked`
  warm restore   rm installed tree;          `skillpm install --locked`
  no-op          everything in place;        `skillpm install --locked`
  add one        project of N; `skillpm add` one more skill
beside the baselines `cp -r` of the final tree and `tar xzf` of the same
tarballs (one shell loop), timed the same way.
Run: python3 benches/install.py [sizes...]
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, isolated_env, report, skillpm_bin, time_pair  # noqa: E402

FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 8 + "\n"


def make_skill(base, name, reference="guide.md"):
    d = os.path.join(base, name)
    os.makedirs(os.path.join(d, "scripts"))
    os.makedirs(os.path.join(d, "references"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: Benchmark skill {name}.\nversion: \"1.0.0\"\n---\n")
        f.write(FILLER * 8)
    with open(os.path.join(d, "scripts", "run.sh"), "w") as f:
        f.write("#!/bin/sh\n" + "# " + FILLER * 8)
    with open(os.path.join(d, "references", reference), "w") as f:
        f.write(FILLER * 32)
    return d


def start_registry(data, extra_args=(), exe=None):
    exe = exe or os.path.join(ROOT, "target", "release", "skillpm-registry")
    proc = subprocess.Popen(
        [exe, "serve", "--listen", "127.0.0.1:0", "--data", data, *extra_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("registry exited")
        if "http://" in line:
            url = line[line.index("http://"):].strip().rstrip("/")
            break
    token = subprocess.run(
        [exe, "token", "create", "--user", "bench", "--data", data],
        capture_output=True, text=True, check=True,
    ).stdout.split()[-1]
    return proc, url, token


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [10, 100, 1000]
    exe = skillpm_bin()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = isolated_env(tmp)
        proc, url, token = start_registry(os.path.join(tmp, "data"))
        env["SKILLPM_REGISTRY"] = url
        try:
            src = os.path.join(tmp, "src")
            tarballs = os.path.join(tmp, "tarballs")
            os.makedirs(tarballs)
            published = 0
            for n in sizes:
                # Publish enough skills for this size (+1 for the "add" case).
                while published < n + 1:
                    name = f"bench-{published:04d}"
                    d = make_skill(src, name)
                    subprocess.run([exe, "pack", d, "-o", os.path.join(tarballs, name + ".tar.gz")],
                                   env=env, check=True, capture_output=True)
                    subprocess.run([exe, "publish", d, "--registry", url, "--token", token],
                                   env=env, check=True, capture_output=True)
                    published += 1
                project = os.path.join(tmp, f"p{n}")
                os.makedirs(project)
                with open(os.path.join(project, "skills.toml"), "w") as f:
                    f.write("[skills]\n")
                    for i in range(n):
                        f.write(f'bench-{i:04d} = "^1"\n')
                subprocess.run([exe, "-C", project, "install", "-q"], env=env, check=True)
                installed = os.path.join(project, ".agents", "skills")
                cache = env["XDG_CACHE_HOME"]
                base_cmd = [exe, "-C", project, "install", "--locked", "-q"]

                def rm_tree():
                    shutil.rmtree(installed, ignore_errors=True)

                def rm_all():
                    rm_tree()
                    shutil.rmtree(cache, ignore_errors=True)

                runs = 5 if n >= 1000 else 9
                final = os.path.join(tmp, f"final{n}")
                shutil.copytree(installed, final)
                dest = os.path.join(tmp, f"cp{n}")
                cp_cmd = ["cp", "-r", final, dest]
                rm_cp = lambda: shutil.rmtree(dest, ignore_errors=True)  # noqa: E731
                names = " ".join(f"bench-{i:04d}" for i in range(n))
                xdir = os.path.join(tmp, f"x{n}")
                tar_cmd = f'cd {tarballs} && for s in {names}; do mkdir -p {xdir}/$s && tar xzf $s.tar.gz -C {xdir}/$s; done'
                rm_x = lambda: shutil.rmtree(xdir, ignore_errors=True)  # noqa: E731
                # Each case alternates with its baseline (A B A B ...).
                cold = time_pair(base_cmd, tar_cmd, runs=runs, setup_a=rm_all, setup_b=rm_x, env=env)
                warm = time_pair(base_cmd, cp_cmd, runs=runs, setup_a=rm_tree, setup_b=rm_cp, env=env)
                noop = time_pair(base_cmd, cp_cmd, runs=runs, setup_b=rm_cp, env=env)
                rows += [
                    (f"{n:>4} cold restore (empty cache)", cold[0], "tar xzf", cold[1], cold[2]),
                    (f"{n:>4} warm-cache restore", warm[0], "cp -r", warm[1], warm[2]),
                    (f"{n:>4} no-op install", noop[0], "cp -r", noop[1], noop[2]),
                ]
                if n == 100:
                    manifest = open(os.path.join(project, "skills.toml")).read()
                    lock = open(os.path.join(project, "skills.lock")).read()
                    extra = f"bench-{n:04d}"

                    def reset():
                        open(os.path.join(project, "skills.toml"), "w").write(manifest)
                        open(os.path.join(project, "skills.lock"), "w").write(lock)
                        shutil.rmtree(os.path.join(installed, extra), ignore_errors=True)

                    add = time_pair([exe, "-C", project, "add", "-q", f"{extra}@^1"], cp_cmd,
                                    runs=runs, setup_a=reset, setup_b=rm_cp, env=env)
                    rows.append((f"{n:>4} add one skill", add[0], "cp -r", add[1], add[2]))
                    reset()
        finally:
            proc.terminate()
            proc.wait()
    report(rows)


if __name__ == "__main__":
    main()
