#!/usr/bin/env python3
"""skillpm side by side with the fastest peer, skillcask 0.10.2 (issue 14).

Workloads: 10 / 100 / 1 000 skills of ~24 KB (SKILL.md, scripts/run.sh,
references/notes.md), generated here
- in one git repository per size, served by `git http-backend` over HTTPS
  (nginx + fcgiwrap on loopback, certificate from a CA made for the run);
- published to `skillpm-registry` (behind the same nginx, so both tools pay
  for TLS alike; nginx offers HTTP/2 and HTTP/1.1 by ALPN, as any TLS
  front does: skillpm takes HTTP/2 and multiplexes its downloads on one
  connection, skillcask's client speaks HTTP/1.1) and, for skillcask, as a static Composer repository
  (`packages.json`, `p2/`, zips) made by `skillcask publish` from the same
  skill directories and served by the same nginx.

Scenarios, each pair interleaved in one run (A B A B ...), medians and the
median of the per-pair ratios skillpm/skillcask:
  git add all       fresh project, empty cache: every skill of the repository
  git restore cold  lock present, no installed tree, empty cache
  reg add all       fresh project whose manifest lists the N skills, no lock
  reg restore cold  lock present, no installed tree, empty cache
  restore warm      skillpm only (skillcask keeps no cache)
  no-op             everything in place; install from the lock again
  add one           project of N registry skills; add one more
After the add-all runs, both installed trees must hold byte-identical
SKILL.md files.

Trust: skillcask reads the CA from SKILLCASK_CA_FILE; skillpm's registry
client from SSL_CERT_FILE (rustls-platform-verifier reads the system trust
store through it) and git from GIT_SSL_CAINFO.

Needs nginx, fcgiwrap and openssl (Debian packages; installed with apt-get
if missing) and cargo (skillcask is built once into target/peers/).
Run: python3 benches/peers.py [--sizes 10 100 1000] [--runs N] [--history N] [--packed]
     [--skillpm-dir DIR]  (a directory with other skillpm + skillpm-registry
                           builds, e.g. a copy of a previous release build)
     [--dirs A B]         (skillpm's projects and cache under A, skillcask's
                           under B: see "Where the projects live" below)

Where the projects live: skillcask stages every install inside the project
and deletes the staging copy (6 000 unlinks for 1 000 skills). On ext4
without a journal, the next process that creates files in the same block
groups within 30 s scans past each of those inodes, so with both tools in
one directory skillpm's run after skillcask's paid for skillcask's deletes
(a 1 000-skill restore measured 0.48 s alone and 0.91 s in the pair).
`--dirs` puts each tool on its own file system of the same kind (the
README's figures: two journaled ext4 images on loop devices), so each tool
pays only for its own work.
"""
import argparse
import concurrent.futures
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import ssl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, isolated_env, skillpm_bin, time_cmd, time_pair  # noqa: E402
from install import make_skill, start_registry  # noqa: E402

SKILLCASK_VERSION = "0.10.2"
PEERS = os.path.join(ROOT, "target", "peers")
VENDOR = "bench"

NGINX_CONF = """
worker_processes 2;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
  log_format timed '$msec $request_time $status "$request"';
  access_log {access_log};
  sendfile on;
  types {{ application/json json; application/zip zip; }}
  default_type application/octet-stream;
  client_max_body_size 64m;
  upstream registry {{ server {registry}; keepalive 32; }}
  server {{
    listen 127.0.0.1:{port} ssl http2;
    ssl_certificate {tmp}/tls/server.pem;
    ssl_certificate_key {tmp}/tls/server.key;
    keepalive_requests 100000;
    location /composer/ {{ alias {composer}/; }}
    location ~ ^/git(/.*)$ {{
      include /etc/nginx/fastcgi_params;
      fastcgi_pass unix:{tmp}/fcgiwrap.sock;
      fastcgi_param SCRIPT_FILENAME {backend};
      fastcgi_param GIT_PROJECT_ROOT {repos};
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param GIT_PROTOCOL $http_git_protocol;
      fastcgi_param PATH_INFO $1;
      fastcgi_read_timeout 600s;
    }}
    location / {{
      proxy_pass http://registry;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
    }}
  }}
}}
"""


def sh(cmd, **kw):
    """Runs a command, printing its output if it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {cmd}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def ensure_tools():
    need = {"nginx": "/usr/sbin/nginx", "fcgiwrap": "/usr/sbin/fcgiwrap", "openssl": None}
    missing = [t for t, p in need.items() if not shutil.which(t) and not (p and os.path.exists(p))]
    if missing:
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True)


def skillcask_bin():
    """skillcask 0.10.2, built once with `cargo install --root`."""
    root = os.path.join(PEERS, "skillcask")
    exe = os.path.join(root, "bin", "skillcask")
    if not os.path.exists(exe):
        subprocess.run(["cargo", "install", "--root", root, "skillcask", "--version",
                        SKILLCASK_VERSION, "--locked"], check=True)
    version = sh([exe, "--version"])
    assert SKILLCASK_VERSION in version, version
    return exe


def make_tls(tmp):
    """A CA made for this run and a certificate for 127.0.0.1 it signed."""
    d = os.path.join(tmp, "tls")
    os.makedirs(d)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    sh(["openssl", "req", "-x509", *ec, "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem",
        "-days", "2", "-subj", "/CN=skillpm bench CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    sh(["openssl", "req", *ec, "-keyout", f"{d}/server.key", "-out", f"{d}/server.csr",
        "-subj", "/CN=127.0.0.1"])
    with open(f"{d}/ext.cnf", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n")
    sh(["openssl", "x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.pem",
        "-CAkey", f"{d}/ca.key", "-CAcreateserial", "-out", f"{d}/server.pem", "-days", "2",
        "-extfile", f"{d}/ext.cnf"])
    return f"{d}/ca.pem"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def git(*args, cwd):
    sh(["git", *args], cwd=cwd)


def commit_all(work, message):
    git("add", "-A", cwd=work)
    git("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", message, cwd=work)


def serve(tmp, work, name, packed):
    """The repository at `work`, cloned bare where the server finds it as
    `bench/NAME.git` (repacked with `packed`, as a host holds what was
    pushed to it), with the same settings every repository here has."""
    bare = os.path.join(tmp, "repos", VENDOR, f"{name}.git")
    os.makedirs(os.path.dirname(bare), exist_ok=True)
    git("clone", "-q", "--bare", work, bare, cwd=tmp)
    if packed:
        git("repack", "-adq", cwd=bare)
    for k in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant",
              "uploadpack.allowReachableSHA1InWant"):
        git("config", k, "true", cwd=bare)
    return f"{VENDOR}/{name}.git"


def make_repo(tmp, src, n, history=0, packed=False):
    """One repository with skills/bench-0000 ... for n skills, served bare.
    With `history`, that many earlier commits each replace a 32 KB file of
    random bytes (a repository with a past: what a fetch of the tip alone
    leaves behind); the last commit removes it and adds the skills."""
    work = os.path.join(tmp, "work", f"skills-{n}")
    os.makedirs(work)
    git("init", "-q", "-b", "main", cwd=work)
    for k in range(history):
        with open(os.path.join(work, "past.bin"), "wb") as f:
            f.write(os.urandom(32 * 1024))
        commit_all(work, f"past {k}")
    if history:
        os.remove(os.path.join(work, "past.bin"))
    for i in range(n):
        name = f"bench-{i:04d}"
        shutil.copytree(os.path.join(src, name), os.path.join(work, "skills", name))
    commit_all(work, "skills")
    return serve(tmp, work, f"skills-{n}", packed)


def make_single_repos(tmp, src, count, packed=False):
    """`count` repositories one-0000 ... holding one skill each at their
    root, the layout of a skill published as its own repository; returns
    their paths below the server's `git/`."""
    paths = []
    for i in range(count):
        work = os.path.join(tmp, "work", f"one-{i:04d}")
        shutil.copytree(os.path.join(src, f"bench-{i:04d}"), work)
        git("init", "-q", "-b", "main", cwd=work)
        commit_all(work, "skill")
        paths.append(serve(tmp, work, f"one-{i:04d}", packed))
    return paths


class Servers:
    """skillpm-registry, fcgiwrap (git http-backend) and nginx in front."""

    def __init__(self, tmp, registry_exe, access_log=None, registry_via=None):
        """With `access_log` (a path), nginx logs each request there: the
        time it ended, its duration, status and request line. With
        `registry_via`, nginx reaches the registry at the `host:port` it
        returns for the registry's own."""
        self.tmp = tmp
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.procs = []
        reg, reg_url, self.token = start_registry(
            os.path.join(tmp, "data"), ["--public-url", self.url], exe=registry_exe)
        self.procs.append(reg)
        sock = os.path.join(tmp, "fcgiwrap.sock")
        # Its own process group: fcgiwrap forks workers, stopped together.
        self.procs.append(subprocess.Popen(["/usr/sbin/fcgiwrap", "-c", "4", "-s", f"unix:{sock}"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True))
        while not os.path.exists(sock):
            time.sleep(0.05)
        os.chmod(sock, 0o777)
        conf = os.path.join(tmp, "nginx.conf")
        backend = os.path.join(sh(["git", "--exec-path"]).strip(), "git-http-backend")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(
                tmp=tmp, port=self.port,
                registry=(registry_via or (lambda a: a))(reg_url.split("://", 1)[1]),
                composer=os.path.join(tmp, "composer"), repos=os.path.join(tmp, "repos"),
                backend=backend,
                access_log=f"{access_log} timed" if access_log else "off"))
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.procs.append(subprocess.Popen([nginx, "-c", conf, "-p", tmp],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        ctx = ssl.create_default_context(cafile=os.path.join(tmp, "tls", "ca.pem"))
        for _ in range(100):
            try:
                urllib.request.urlopen(self.url + "/health", context=ctx).read()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("nginx did not come up; see " + os.path.join(tmp, "nginx-error.log"))

    def stop(self):
        for p in reversed(self.procs):
            if p.args[0].endswith("fcgiwrap"):
                os.killpg(p.pid, signal.SIGTERM)
            else:
                p.terminate()
            p.wait()


def cask_manifest(url, names):
    lines = [
        "[repositories]",
        f'bench = {{ type = "composer", url = "{url}/composer/packages.json", min-release-age = "0" }}',
        "packagist = false",
        "github = false",
        "",
        "[skills]",
        *(f'"{VENDOR}/{n}" = "^1.0"' for n in names),
        "",
        "[agents]",
        "targets = []",
        "",
        "[policy]",
        'min-release-age = "0"',
        "",
    ]
    return "\n".join(lines)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


# Setups move old trees here instead of deleting them; the trash goes with
# the run's directory at the end. Deleting thousands of files
# right before a timed run makes the run pay for them: ext4 without a
# journal (as on this benchmark's machines) will not reuse an inode freed
# in the last 30 s and scans past every such inode to find a free one, so a
# run would be charged for whatever its setup deleted, not for its own work.
TRASH = []


def fresh(dir_, manifest):
    """An empty project holding only `manifest` as skills.toml."""
    rm(dir_)
    write(os.path.join(dir_, "skills.toml"), manifest)


def rm(*paths):
    for p in paths:
        if os.path.lexists(p):
            # The trash on the same file system (see --dirs), so this is a
            # rename.
            dev = os.stat(os.path.dirname(p)).st_dev
            trash = next(t for t in TRASH if os.stat(t).st_dev == dev)
            os.rename(p, f"{trash}/{len(os.listdir(trash))}")


def snapshot(project):
    """Every file of a project but the installed trees, to put back later."""
    out = {}
    for base, dirs, files in os.walk(project):
        rel = os.path.relpath(base, project)
        parts = rel.split(os.sep)
        if len(parts) >= 3 and parts[0] == ".agents":
            dirs[:] = []
            continue
        for f in files:
            p = os.path.join(base, f)
            out[p] = open(p, "rb").read()
    return out


def restore(snap, *gone):
    """Puts back the files of `snap` after removing the paths `gone`."""
    rm(*gone)
    for p, b in snap.items():
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(b)


def same_skill_md(a, b, n):
    """Both installed trees hold the same N SKILL.md files, byte for byte."""
    names = [f"bench-{i:04d}" for i in range(n)]
    for name in names:
        pa = os.path.join(a, ".agents", "skills", name, "SKILL.md")
        pb = os.path.join(b, ".agents", "skills", name, "SKILL.md")
        if open(pa, "rb").read() != open(pb, "rb").read():
            raise SystemExit(f"SKILL.md of {name} differs between {pa} and {pb}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[10, 100, 1000])
    ap.add_argument("--runs", type=int, help="pairs timed per case (default 7 / 5 / 3 by size)")
    ap.add_argument("--history", type=int, default=0,
                    help="earlier commits in each git repository, 32 KB of new bytes each (default 0)")
    ap.add_argument("--packed", action="store_true",
                    help="serve the git repositories packed, as a host holds what was pushed "
                         "to it (default: loose objects as `git commit` left them, so the "
                         "server compresses every object again for every fetch)")
    ap.add_argument("--repos", type=int, default=20,
                    help="single-skill git repositories restored together in the "
                         "many-repositories rows (default 20; 0 skips them)")
    ap.add_argument("--skillpm-dir", help="directory holding skillpm and skillpm-registry to time")
    ap.add_argument("--dirs", nargs=2, metavar=("SKILLPM_DIR", "SKILLCASK_DIR"),
                    help="where each tool's projects (and skillpm's cache) live, e.g. two "
                         "file systems of the same kind, so neither tool's deletes slow the "
                         "other's next run (default: both in the run's temp directory)")
    args = ap.parse_args()
    ensure_tools()
    if args.skillpm_dir:
        bindir = os.path.abspath(args.skillpm_dir)
    else:
        bindir = os.path.dirname(skillpm_bin())
    spm = os.path.join(bindir, "skillpm")
    cask = skillcask_bin()
    has_all = "--all" in sh([spm, "add", "--help"])
    rows = []
    tmp = tempfile.mkdtemp(prefix="skillpm-peers-")
    os.chmod(tmp, 0o755)  # nginx workers read the composer files as another user
    homes = [tempfile.mkdtemp(prefix="skillpm-peers-", dir=d) for d in args.dirs or []]
    home_spm, home_cask = homes or (tmp, tmp)
    for base in {tmp, home_spm, home_cask}:
        TRASH.append(os.path.join(base, "trash"))
        os.makedirs(TRASH[-1])
    servers = None
    try:
        ca = make_tls(tmp)
        env = isolated_env(tmp)
        env.update(SSL_CERT_FILE=ca, GIT_SSL_CAINFO=ca, SKILLCASK_CA_FILE=ca,
                   NO_COLOR="1", SKILLCASK_AGENT="0", GIT_CONFIG_NOSYSTEM="1")
        cache = env["XDG_CACHE_HOME"] = os.path.join(home_spm, "cache")
        biggest = max(args.sizes)
        src = os.path.join(tmp, "src")
        names = [f"bench-{i:04d}" for i in range(max(biggest + 1, args.repos))]
        for name in names:
            make_skill(src, name, reference="notes.md")
        for n in args.sizes:
            make_repo(tmp, src, n, args.history, args.packed)
        singles = make_single_repos(tmp, src, args.repos, args.packed)
        servers = Servers(tmp, os.path.join(bindir, "skillpm-registry"))
        url = servers.url
        env["SKILLPM_REGISTRY"] = url
        sh([cask, "publish", "--vendor", VENDOR, "--base-url", url + "/composer",
            "--out", os.path.join(tmp, "composer"), src], env=env)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda name: sh([spm, "publish", os.path.join(src, name), "--registry",
                                           url, "--token", servers.token], env=env), names))
        print(f"{len(names)} skills published to skillpm-registry and a Composer repository",
              file=sys.stderr)

        def timers(n, p_spm, p_cask, runs, warm):
            """`pair` times a command of each tool in turn, `solo` skillpm's
            alone; rows are filed under `n`."""
            def pair(label, a, b, setup_a=None, setup_b=None):
                # One checked run each first (prints what failed), then timing.
                for cmd, setup, cwd in ((a, setup_a, p_spm), (b, setup_b, p_cask)):
                    if setup:
                        setup()
                    sh(cmd, env=env, cwd=cwd)
                ma, mb, ratio = time_pair(a, b, runs=runs, warmup=warm, setup_a=setup_a,
                                          setup_b=setup_b, env=env, cwd_a=p_spm, cwd_b=p_cask)
                rows.append((n, label, ma, mb, ratio))
                print(f"{n:>5} {label:<22} skillpm {ma*1000:9.1f} ms  skillcask {mb*1000:9.1f} ms"
                      f"  {ratio:5.2f}x", file=sys.stderr)

            def solo(label, cmd, setup):
                setup()
                sh(cmd, env=env, cwd=p_spm)
                med, _, _ = time_cmd(cmd, runs=runs, warmup=warm, env=env, cwd=p_spm, setup=setup)
                rows.append((n, label, med, None, None))
                print(f"{n:>5} {label:<22} skillpm {med*1000:9.1f} ms", file=sys.stderr)

            return pair, solo

        for n in args.sizes:
            runs = args.runs or (7 if n <= 10 else 5 if n <= 100 else 3)
            warm = 1 if n < 1000 else 0
            some = names[:n]
            repo = f"{url}/git/{VENDOR}/skills-{n}.git"
            p_spm = os.path.join(home_spm, f"spm-{n}")
            p_cask = os.path.join(home_cask, f"cask-{n}")
            inst_spm = os.path.join(p_spm, ".agents")
            inst_cask = os.path.join(p_cask, ".agents")
            base = cask_manifest(url, [])

            pair, solo = timers(n, p_spm, p_cask, runs, warm)

            # git: add every skill of one repository
            if has_all:
                spm_git_manifest = "[skills]\n"
                spm_add = [spm, "-q", "add", "--all", f"git+{repo}"]
            else:
                spm_git_manifest = "[skills]\n" + "".join(
                    f'{s} = {{ git = "{repo}", path = "skills/{s}" }}\n' for s in some)
                spm_add = [spm, "-q", "install"]
            pair("git: add all", spm_add, [cask, "add", f"git:{repo}"],
                 setup_a=lambda: (rm(cache), fresh(p_spm, spm_git_manifest)),
                 setup_b=lambda: fresh(p_cask, base))
            same_skill_md(p_spm, p_cask, n)
            pair("git: restore cold", [spm, "-q", "install", "--locked"],
                 [cask, "install", "--frozen"],
                 setup_a=lambda: rm(inst_spm, cache), setup_b=lambda: rm(inst_cask))
            solo("git: restore warm", [spm, "-q", "install", "--locked"], lambda: rm(inst_spm))

            # registry: the same N skills, published
            spm_manifest = "[skills]\n" + "".join(f'{s} = "^1"\n' for s in some)
            pair("reg: add all", [spm, "-q", "install"], [cask, "install"],
                 setup_a=lambda: (rm(cache), fresh(p_spm, spm_manifest)),
                 setup_b=lambda: fresh(p_cask, cask_manifest(url, some)))
            same_skill_md(p_spm, p_cask, n)
            pair("reg: restore cold", [spm, "-q", "install", "--locked"],
                 [cask, "install", "--frozen"],
                 setup_a=lambda: rm(inst_spm, cache), setup_b=lambda: rm(inst_cask))
            solo("reg: restore warm", [spm, "-q", "install", "--locked"], lambda: rm(inst_spm))
            pair("no-op install", [spm, "-q", "install", "--locked"], [cask, "install", "--frozen"])
            extra = names[n]
            snap_spm, snap_cask = snapshot(p_spm), snapshot(p_cask)
            pair("add one", [spm, "-q", "add", f"{extra}@^1"], [cask, "add", f"{VENDOR}/{extra}"],
                 setup_a=lambda: restore(snap_spm, os.path.join(inst_spm, "skills", extra)),
                 setup_b=lambda: restore(snap_cask, os.path.join(inst_cask, "skills", extra)))
            restore(snap_spm, os.path.join(inst_spm, "skills", extra))
            restore(snap_cask, os.path.join(inst_cask, "skills", extra))

        # git: many single-skill repositories, fetched side by side
        if singles:
            key = f"{len(singles)} repos"
            p_spm = os.path.join(home_spm, "spm-repos")
            p_cask = os.path.join(home_cask, "cask-repos")
            inst_spm = os.path.join(p_spm, ".agents")
            inst_cask = os.path.join(p_cask, ".agents")
            pair, _ = timers(key, p_spm, p_cask, args.runs or 7, 1)
            # Each tool writes its own manifest, one `add` per repository
            # for skillcask (it takes one package at a time), one `add` of
            # them all for skillpm; the rows time what comes after.
            fresh(p_spm, "[skills]\n")
            fresh(p_cask, cask_manifest(url, []))
            sh([spm, "-q", "add", *(f"git+{url}/git/{r}" for r in singles)], env=env, cwd=p_spm)
            for r in singles:
                sh([cask, "add", f"git:{url}/git/{r}"], env=env, cwd=p_cask)
            same_skill_md(p_spm, p_cask, len(singles))
            man_spm = open(os.path.join(p_spm, "skills.toml")).read()
            man_cask = open(os.path.join(p_cask, "skills.toml")).read()
            snap_spm, snap_cask = snapshot(p_spm), snapshot(p_cask)
            pair("git: install, no lock", [spm, "-q", "install"], [cask, "install"],
                 setup_a=lambda: (rm(cache), fresh(p_spm, man_spm)),
                 setup_b=lambda: fresh(p_cask, man_cask))
            same_skill_md(p_spm, p_cask, len(singles))
            pair("git: restore cold", [spm, "-q", "install", "--locked"],
                 [cask, "install", "--frozen"],
                 setup_a=lambda: restore(snap_spm, cache, inst_spm),
                 setup_b=lambda: restore(snap_cask, inst_cask))
    finally:
        if servers:
            servers.stop()
        for d in [tmp, *homes]:
            shutil.rmtree(d, ignore_errors=True)
    report(rows, args.sizes)
    if any(isinstance(r[0], str) for r in rows):
        print()
        report(rows, sorted({r[0] for r in rows if isinstance(r[0], str)}))


def report(rows, sizes):
    """One Markdown table: ratio (skillpm vs skillcask medians) per size."""
    labels = list(dict.fromkeys(r[1] for r in rows if r[0] in sizes))
    print("| scenario | " + " | ".join(n if isinstance(n, str) else f"{n} skills"
                                        for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for label in labels:
        cells = []
        for n in sizes:
            r = next((r for r in rows if r[0] == n and r[1] == label), None)
            if r is None:
                cells.append("")
            elif r[3] is None:
                cells.append(f"{fmt(r[2])} (skillpm only)")
            else:
                cells.append(f"**{r[4]:.2f}x** ({fmt(r[2])} vs {fmt(r[3])})")
        print(f"| {label} | " + " | ".join(cells) + " |")


def fmt(s):
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"


if __name__ == "__main__":
    main()
