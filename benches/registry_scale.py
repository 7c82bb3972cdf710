#!/usr/bin/env python3
"""Registry scale-out benchmark (issue 6): index and download throughput.

In one run, on this machine, against real services on loopback:
  embedded        one replica on SQLite + files (the default), direct
  pg+s3 x1        one replica on PostgreSQL + S3 (s3s-fs), direct
  pg+s3 x1 nginx  the same replica behind nginx (the proxy's own cost)
  pg+s3 x2 nginx  two replicas behind an nginx round-robin upstream
Load: wrk (Debian's `wrk`, installed if missing), a Lua script cycling
through every skill's index or download URL, fixed threads/connections and
duration. Prints requests/s, p99 latency and ratios.

Run: python3 benches/registry_scale.py [--duration SECONDS] [--skills N]
Needs root for apt-get and for scripts/services.sh (PostgreSQL runs as
`postgres`).
"""
import argparse
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVICES = os.path.join(ROOT, "scripts", "services.sh")
BIN = os.path.join(ROOT, "target", "release", "skillpm-registry")


def ensure_tools():
    missing = [p for p, b in (("wrk", "wrk"), ("nginx", "nginx")) if not shutil.which(b)
               and not os.path.exists(f"/usr/sbin/{b}")]
    if missing:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        r = subprocess.run(["apt-get", "install", "-y", "-q"] + missing, env=env,
                           stdout=subprocess.DEVNULL)
        if r.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], stdout=subprocess.DEVNULL, check=True)
            subprocess.run(["apt-get", "install", "-y", "-q"] + missing, env=env,
                           stdout=subprocess.DEVNULL, check=True)


def nginx_bin():
    return shutil.which("nginx") or "/usr/sbin/nginx"


def services_env():
    subprocess.run([SERVICES, "start"], check=True)
    out = subprocess.run([SERVICES, "env"], check=True, capture_output=True, text=True).stdout
    env = dict(os.environ)
    for line in out.splitlines():
        m = re.match(r"export (\w+)=(.*)", line)
        if m:
            env[m.group(1)] = m.group(2)
    return env


def psql(env, sql):
    pg = sorted(d for d in os.listdir("/usr/lib/postgresql"))[-1]
    url = env["SKILLPM_TEST_POSTGRES"]
    subprocess.run([f"/usr/lib/postgresql/{pg}/bin/psql", url, "-qc", sql], check=True,
                   stdout=subprocess.DEVNULL)


def tarball(name, version):
    """A valid package: SKILL.md plus ~8 KB of reference text."""
    filler = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 8 + "\n") * 16
    files = {
        "SKILL.md": f"---\nname: {name}\ndescription: Benchmark skill {name}\n"
                            f"version: {version}\n---\nUse {name} for benchmarks.\n",
        "references/notes.md": filler,
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Proc:
    def __init__(self, args, env):
        self.p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit(f"server did not start: {line!r}")
        self.url = line.strip().removeprefix("listening on ")

    def stop(self):
        self.p.terminate()
        self.p.wait()


def token(store_args, env):
    out = subprocess.run([BIN, "token", "create", "--user", "bench"] + store_args, env=env,
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def publish_all(url, tok, n):
    for i in range(n):
        req = urllib.request.Request(f"{url}/api/v1/skills/new", data=tarball(f"skill-{i:03}", "1.0.0"),
                                     method="PUT", headers={"Authorization": f"Bearer {tok}"})
        urllib.request.urlopen(req).read()


def lua_script(dirpath, kind, n):
    if kind == "index":
        paths = [f"/index/skill-{i:03}" for i in range(n)]
    else:
        paths = [f"/api/v1/skills/skill-{i:03}/1.0.0/download" for i in range(n)]
    path = os.path.join(dirpath, f"{kind}.lua")
    with open(path, "w") as f:
        f.write("local paths = {" + ",".join(f'"{p}"' for p in paths) + "}\n")
        f.write("local i = 0\n")
        f.write("request = function()\n  i = (i % #paths) + 1\n"
                "  return wrk.format(\"GET\", paths[i])\nend\n")
    return path


def to_ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(url, script, duration, threads=2, conns=32):
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{conns}", f"-d{duration}s", "--latency",
                          "-s", script, url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    p99 = to_ms(m.group(1), m.group(2))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"wrk saw {errors.group(1)} error responses against {url}")
    return rps, p99


def nginx(tmp, upstreams, env):
    prefix = tempfile.mkdtemp(dir=tmp)
    servers = "\n".join(f"    server {u.removeprefix('http://')};" for u in upstreams)
    user = "user root;" if os.geteuid() == 0 else ""
    conf = f"""{user}
worker_processes 1;
error_log {prefix}/error.log;
pid {prefix}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  upstream registry {{
{servers}
    keepalive 64;
  }}
  server {{
    listen 127.0.0.1:0;
  }}
}}
"""
    # nginx cannot listen on port 0: pick a free port first.
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    conf = conf.replace("listen 127.0.0.1:0;", f"""listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://registry;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
    }}""")
    path = os.path.join(prefix, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    p = subprocess.Popen([nginx_bin(), "-p", prefix, "-c", path, "-g", "daemon off;"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health").read()
            break
        except Exception:
            time.sleep(0.05)
    else:
        p.kill()
        raise SystemExit("nginx did not start")
    return p, f"http://127.0.0.1:{port}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--skills", type=int, default=50)
    args = ap.parse_args()
    ensure_tools()
    subprocess.run(["cargo", "build", "--release", "-p", "skillpm-registry", "--quiet"], cwd=ROOT,
                   check=True)
    env = services_env()
    tmp = tempfile.mkdtemp(prefix="skillpm-bench-")
    db = f"bench_{os.getpid()}"
    psql(env, f"CREATE DATABASE {db}")
    pg_url = re.sub(r"/[^/]*$", f"/{db}", env["SKILLPM_TEST_POSTGRES"])
    shared = ["--database", pg_url, "--blobs", f"{env['SKILLPM_TEST_S3']}/{db}"]
    embedded = ["--data", os.path.join(tmp, "embedded")]
    procs = []
    try:
        emb = Proc([BIN, "serve", "--listen", "127.0.0.1:0"] + embedded, env)
        procs.append(emb)
        publish_all(emb.url, token(embedded, env), args.skills)
        r1 = Proc([BIN, "serve", "--listen", "127.0.0.1:0"] + shared, env)
        r2 = Proc([BIN, "serve", "--listen", "127.0.0.1:0"] + shared, env)
        procs += [r1, r2]
        publish_all(r1.url, token(shared, env), args.skills)
        ng1, ng1_url = nginx(tmp, [r1.url], env)
        ng2, ng2_url = nginx(tmp, [r1.url, r2.url], env)
        cases = [
            ("embedded x1 direct", emb.url),
            ("pg+s3 x1 direct", r1.url),
            ("pg+s3 x1 nginx", ng1_url),
            ("pg+s3 x2 nginx round-robin", ng2_url),
        ]
        results = {}
        for kind in ("index", "download"):
            script = lua_script(tmp, kind, args.skills)
            for label, url in cases:
                wrk(url, script, 2)  # warm-up
                results[(kind, label)] = wrk(url, script, args.duration)
        ng1.terminate()
        ng2.terminate()
        print(f"\nwrk -t2 -c32 -d{args.duration}s, {args.skills} skills, "
              f"{os.cpu_count()} cores; ratios vs embedded x1 direct\n")
        print(f"{'case':<32} {'kind':<9} {'req/s':>10} {'p99 ms':>8} {'vs embedded':>12}")
        for kind in ("index", "download"):
            base = results[(kind, "embedded x1 direct")][0]
            for label, _ in cases:
                rps, p99 = results[(kind, label)]
                print(f"{label:<32} {kind:<9} {rps:>10.0f} {p99:>8.2f} {rps / base:>11.2f}x")
        for kind in ("index", "download"):
            one = results[(kind, "pg+s3 x1 nginx")][0]
            two = results[(kind, "pg+s3 x2 nginx round-robin")][0]
            print(f"{kind}: two replicas / one replica (both behind nginx) = {two / one:.2f}x")
    finally:
        for p in procs:
            p.stop()
        try:
            psql(env, f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        except Exception:
            pass
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
