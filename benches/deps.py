#!/usr/bin/env python3
"""Skills that need skills (issue 47): skillpm beside Microsoft's APM.

A graph of 200 skills, 4 levels deep (8 / 20 / 50 / 122), each skill its
own git repository holding SKILL.md at its root (4-24 KB with its
references), a `skill.toml` naming the skills of the next level it needs
(2 or 3 each, so several skills share a dependency: diamonds) and an
`apm.yml` naming the same ones for APM. Generated from a fixed seed and
served by `git http-backend` over HTTPS on loopback (peers.py's nginx and
fcgiwrap, a CA made for the run).

Scenarios, interleaved with APM's (A B A B ...), medians and the median
of the per-pair ratios skillpm/APM:
  cold add       fresh project, empty caches: the level-0 skills added
                 (APM: `install` of an apm.yml naming them), the whole
                 graph resolved and installed
  cold restore   skills.toml + skills.lock (apm.yml + apm.lock.yaml) in a
                 fresh project, empty caches
  no-op install  everything in place, install again
After the cold add both tools must have installed the same 200 names.

Requests: nginx logs every request; each scenario's count is read from
the log of one run, with the number of bursts (runs of requests with no
idle gap between them: a client that waits for one level before sending
the next shows one burst, or a few, per level). The same 200 skills in a
2-level graph (60 / 140) show what depth costs.

Resolution: a 1 000-skill git graph (`--resolve-size`), added once, so
every skill is in the cache and the lock; then a local skill is added to
skills.toml by hand and `install` re-solves the whole graph with every
locked skill held (no request), timed beside a no-op `install` of the same
project, which takes the lock as it is and solves nothing.

APM: `apm-cli` 0.35 from PyPI in a venv under the run's directory.

Run: python3 benches/deps.py [--quick] [--runs N] [--resolve-size N]
"""
import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import isolated_env, skillpm_bin, time_pair  # noqa: E402
from peers import (TRASH, VENDOR, Servers, commit_all, ensure_tools, fmt, fresh,  # noqa: E402
                   git, make_tls, rm, serve, sh, snapshot, restore, write)

APM_VERSION = "0.35.*"
SEED = 47
DEEP = [8, 20, 50, 122]
WIDE = [60, 140]
FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 4 + "\n"


def graph(prefix, levels, rng):
    """Names by level and each skill's dependencies: every skill of level
    L+1 is needed by at least one of level L, each of level L needs 2 or
    3 of level L+1 (3 where 2 would leave a skill unreached)."""
    names = [[f"{prefix}{lv}-{i:03d}" for i in range(n)] for lv, n in enumerate(levels)]
    deps = {}
    for lv, parents in enumerate(names):
        if lv + 1 == len(names):
            for p in parents:
                deps[p] = []
            break
        children = names[lv + 1]
        assert len(children) <= 3 * len(parents), "a level may be at most 3x the one above"
        degree = [rng.choice((2, 3)) for _ in parents]
        short = len(children) - sum(degree)
        for i in rng.sample(range(len(parents)), len(parents)):
            if short <= 0:
                break
            if degree[i] == 2:
                degree[i], short = 3, short - 1
        order = children[:]
        rng.shuffle(order)
        picked = [[] for _ in parents]
        slots = [i for i, d in enumerate(degree) for _ in range(d)]
        rng.shuffle(slots)
        # Cover every child once, then fill the other slots at random.
        for child, i in zip(order, sorted(slots[:len(order)], key=lambda i: len(picked[i]))):
            picked[i].append(child)
        for i, d in enumerate(degree):
            while len(picked[i]) < d:
                c = rng.choice(children)
                if c not in picked[i]:
                    picked[i].append(c)
        for p, ds in zip(parents, picked):
            deps[p] = sorted(ds)
    return names, deps


def make_skills(tmp, url, names, deps, rng):
    """One served repository per skill; returns each name's clone URL."""
    urls = {n: f"{url}/git/{VENDOR}/{n}.git" for level in names for n in level}
    for level in names:
        for name in level:
            work = os.path.join(tmp, "work", name)
            body = FILLER * (rng.randint(4, 24) * 1024 // len(FILLER))
            write(os.path.join(work, "SKILL.md"),
                  f"---\nname: {name}\ndescription: Benchmark skill {name}.\n---\n{body[:len(body) // 3]}")
            write(os.path.join(work, "references", "notes.md"), body[len(body) // 3:])
            write(os.path.join(work, "skill.toml"), "[dependencies]\n" + "".join(
                f'{d} = {{ git = "{urls[d]}" }}\n' for d in deps[name]))
            write(os.path.join(work, "apm.yml"), apm_yml(name, [urls[d] for d in deps[name]]))
            git("init", "-q", "-b", "main", cwd=work)
            commit_all(work, "skill")
            serve(tmp, work, name, packed=True)
    return urls


def apm_yml(name, dep_urls):
    lines = [f"name: {name}", "version: 1.0.0", "dependencies:", "  apm:"]
    lines += [f"    - {u}" for u in dep_urls] or ["    []"]
    if not dep_urls:
        lines[-2] = "  apm: []"
        lines.pop()
    return "\n".join(lines) + "\n"


class Log:
    """Requests nginx logged since the last `take`."""

    def __init__(self, path):
        self.path, self.at = path, 0

    def take(self):
        with open(self.path) as f:
            f.seek(self.at)
            lines = f.read().splitlines()
            self.at = f.tell()
        reqs = []
        for line in lines:
            end, took, status, request = line.split(" ", 3)
            if "/git/" in request:
                reqs.append((float(end) - float(took), float(end), status))
        return reqs


def bursts(reqs, gap=0.002):
    """Runs of requests with no idle time longer than `gap` between them."""
    count, busy_until = 0, None
    for start, end, _ in sorted(reqs):
        if busy_until is None or start > busy_until + gap:
            count += 1
        busy_until = end if busy_until is None else max(busy_until, end)
    return count


def installed(project, tool):
    """The skill names a tool installed into a project."""
    roots = {"skillpm": [".agents/skills"],
             "APM": [".github/skills", ".claude/skills", ".agents/skills"]}[tool]
    found = set()
    for r in roots:
        d = os.path.join(project, r)
        if os.path.isdir(d):
            found |= {n for n in os.listdir(d) if os.path.exists(os.path.join(d, n, "SKILL.md"))}
    return found


def apm_bin(tmp):
    venv = os.path.join(tmp, "apm-venv")
    sh([sys.executable, "-m", "venv", venv])
    sh([os.path.join(venv, "bin", "pip"), "install", "-q", f"apm-cli=={APM_VERSION}"])
    exe = os.path.join(venv, "bin", "apm")
    print("APM:", sh([exe, "--version"]).strip(), file=sys.stderr)
    return exe


def resolve_rows(spm, env, tmp, url, size, runs, log):
    """A `size`-skill graph added once; then `install` re-solving it with
    every skill held from the lock, beside a no-op `install`."""
    levels = [size * k // 25 for k in (1, 3, 7)]
    levels.append(size - sum(levels))
    rng = random.Random(SEED + 1)
    names, deps = graph("r", levels, rng)
    urls = make_skills(tmp, url, names, deps, rng)
    p = os.path.join(tmp, "spm-resolve")
    fresh(p, "[skills]\n")
    log.take()
    sh([spm, "-q", "add", *(f"git+{urls[n]}" for n in names[0])], env=env, cwd=p)
    added = len(log.take())
    local = os.path.join(p, "local")
    write(os.path.join(local, "SKILL.md"), "---\nname: local\ndescription: A local skill.\n---\n")
    held = snapshot(p)
    manifest = os.path.join(p, "skills.toml")
    with open(manifest, "a") as f:
        f.write('local = { path = "local" }\n')
    with_local = open(manifest).read()
    held[manifest] = with_local.encode()
    # One checked run: no request, one skill more.
    sh([spm, "-q", "install"], env=env, cwd=p)
    assert log.take() == [], "the held re-solve sent requests"
    lock = open(os.path.join(p, "skills.lock")).read()
    assert "local" in lock, "local skill not locked"
    resolve = [spm, "-q", "install"]
    ma, mb, ratio = time_pair(resolve, resolve, runs=max(runs, 5), warmup=1,
                              setup_a=lambda: restore(held, os.path.join(p, ".agents", "skills",
                                                                         "local")),
                              env=env, cwd_a=p, cwd_b=p)
    assert log.take() == [], "the held re-solve sent requests"
    return levels, added, ma, mb, ratio


def print_tables(counts, rows, resolution):
    if rows:
        print("| scenario, 200 skills in 4 levels | skillpm | APM | ratio |")
        print("|---|---:|---:|---:|")
        for r in rows:
            if len(r) == 4:
                print(f"| {r[0]} | {fmt(r[1])} | {fmt(r[2])} | **{r[3]:.3f}x** |")
        for r in rows:
            if len(r) == 2:
                print(f"\n{r[0]}: {r[1]}")
        print()
    print("| graph, 200 skills | tool | scenario | requests | bursts | not 2xx | time, first run |")
    print("|---|---|---|---:|---:|---:|---:|")
    for label, tool, scenario, n, b, bad, took in counts:
        graph_ = f"{label} ({'/'.join(map(str, DEEP if label[0] == '4' else WIDE))})"
        print(f"| {graph_} | {tool} | {scenario} | {n} | {b} | {bad} | {fmt(took)} |")
    if resolution:
        levels, added, ma, mb, ratio = resolution
        print()
        print(f"| {sum(levels)} skills ({'/'.join(map(str, levels))}), all locked and cached "
              f"| median |")
        print("|---|---:|")
        print(f"| cold add (once) | {added} requests |")
        print(f"| install after a local skill is added to skills.toml: the whole graph "
              f"re-solved, every locked skill held, no request | {ma * 1000:.1f} ms |")
        print(f"| no-op install (lock taken as it is, nothing solved) | {mb * 1000:.1f} ms |")
        print(f"| difference (resolution + packing and installing one local skill) "
              f"| {(ma - mb) * 1000:.1f} ms |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, help="pairs timed per case, the first one also "
                    "counted (default 2, --quick 1)")
    ap.add_argument("--quick", action="store_true", help="one pair per case, "
                    "a 300-skill resolution graph")
    ap.add_argument("--resolve-size", type=int, help="skills in the resolution graph, a "
                    "multiple of 25 (default 1000, --quick 300; 0 skips it)")
    ap.add_argument("--no-apm", action="store_true", help="skillpm only")
    args = ap.parse_args()
    runs = args.runs or (1 if args.quick else 2)
    resolve_size = args.resolve_size if args.resolve_size is not None else (
        300 if args.quick else 1000)
    ensure_tools()
    spm = os.environ.get("SKILLPM_BIN") or skillpm_bin()
    registry = os.environ.get("SKILLPM_REGISTRY_BIN") or os.path.join(
        os.path.dirname(spm), "skillpm-registry")
    tmp = tempfile.mkdtemp(prefix="skillpm-deps-")
    os.chmod(tmp, 0o755)
    TRASH.append(os.path.join(tmp, "trash"))
    os.makedirs(TRASH[-1])
    servers = None
    counts, rows, resolution = [], [], None
    try:
        apm = None if args.no_apm else apm_bin(tmp)
        ca = make_tls(tmp)
        env = isolated_env(tmp)
        env.update(SSL_CERT_FILE=ca, GIT_SSL_CAINFO=ca, REQUESTS_CA_BUNDLE=ca, NO_COLOR="1",
                   GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
        cache = env["XDG_CACHE_HOME"]
        home = env["HOME"]
        # APM asks GitHub for its latest release once a day, unless this
        # file says it did: not part of an install.
        write(os.path.join(home, ".cache", "apm", "last_version_check"), "")
        log = Log(os.path.join(tmp, "access.log"))
        servers = Servers(tmp, registry, access_log=log.path)
        url = servers.url
        rng = random.Random(SEED)
        deep = graph("d", DEEP, rng)
        wide = graph("w", WIDE, rng)
        urls = make_skills(tmp, url, *deep, rng)
        urls.update(make_skills(tmp, url, *wide, rng))
        print(f"{sum(DEEP) + sum(WIDE)} repositories served", file=sys.stderr)
        log.take()

        def run(cmd, cwd, setup=None):
            """One run (it must succeed): seconds, requests, bursts, not 2xx."""
            if setup:
                setup()
            log.take()
            start = time.perf_counter()
            sh(cmd, env=env, cwd=cwd)
            took = time.perf_counter() - start
            reqs = log.take()
            bad = [r for r in reqs if not r[2].startswith("2")]
            return took, len(reqs), bursts(reqs), len(bad)

        for label, (names, _) in (("4 levels", deep), ("2 levels", wide)):
            everything = {x for lv in names for x in lv}
            roots = [urls[n] for n in names[0]]
            p_spm = os.path.join(tmp, f"spm-{label[0]}")
            p_apm = os.path.join(tmp, f"apm-{label[0]}")
            inst_spm = os.path.join(p_spm, ".agents")
            apm_state = [os.path.join(p_apm, d) for d in ("apm_modules", ".claude", ".apm-local")]
            spm_add = [spm, "-q", "add", *(f"git+{u}" for u in roots)]
            # `apm install URL...` writes each URL into apm.yml as
            # HOST:PORT/OWNER/REPO, which its own parser then refuses
            # ("Invalid repository path component"): APM's cold add is its
            # `install` of an apm.yml that names the level-0 URLs.
            apm_add = [apm, "install"]

            def spm_fresh(p=p_spm):
                rm(cache)
                fresh(p, "[skills]\n")

            def apm_fresh(p=p_apm):
                rm(cache, os.path.join(home, ".apm"))
                rm(p)
                write(os.path.join(p, "apm.yml"),
                      "name: bench\nversion: 1.0.0\ntargets:\n  - claude\n"
                      "dependencies:\n  apm:\n" + "".join(f"    - {u}\n" for u in roots))

            tools = [("skillpm", spm_add, spm_fresh, p_spm)]
            if apm and label == "4 levels":
                tools.append(("APM", apm_add, apm_fresh, p_apm))
            restores = [("skillpm", [spm, "-q", "install", "--locked"],
                         lambda: rm(cache, inst_spm), p_spm)]
            noops = [("skillpm", [spm, "-q", "install"], None, p_spm)]
            if len(tools) > 1:
                restores.append(("APM", [apm, "install", "--frozen"],
                                 lambda: rm(cache, os.path.join(home, ".apm"), *apm_state), p_apm))
                noops.append(("APM", [apm, "install"], None, p_apm))
            for scenario, cases in (("cold add", tools), ("cold restore", restores),
                                    ("no-op install", noops)):
                times = {tool: [] for tool, *_ in cases}
                for i in range(runs if len(cases) > 1 else 1):
                    for tool, cmd, setup, p in cases:
                        took, n, b, bad = run(cmd, p, setup)
                        times[tool].append(took)
                        if i == 0:
                            counts.append((label, tool, scenario, n, b, bad, took))
                        if scenario == "cold add":
                            got = installed(p, tool)
                            if got != everything:
                                raise SystemExit(
                                    f"{tool} installed {len(got)} of {len(everything)} skills; "
                                    f"missing {sorted(everything - got)[:5]}, "
                                    f"extra {sorted(got - everything)[:5]}")
                if len(cases) > 1:
                    a, b = times["skillpm"], times["APM"]
                    ratio = statistics.median(x / y for x, y in zip(a, b))
                    rows.append((scenario, statistics.median(a), statistics.median(b), ratio))
                    print(f"{scenario:<14} skillpm {fmt(rows[-1][1]):>9}  "
                          f"APM {fmt(rows[-1][2]):>9}  {ratio:.3f}x", file=sys.stderr)
            if len(tools) > 1:
                same = installed(p_spm, "skillpm") == installed(p_apm, "APM")
                rows.append(("same 200 names installed by both", same))

        resolution = resolve_rows(spm, env, tmp, url, resolve_size, runs, log) \
            if resolve_size else None
    finally:
        if servers:
            servers.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print_tables(counts, rows, resolution)


if __name__ == "__main__":
    main()
