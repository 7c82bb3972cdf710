#!/usr/bin/env python3
"""Registry under load (issue 3): `GET /index/NAME` and tarball downloads
from `skillpm-registry` beside nginx serving the same bytes as static files,
both driven by wrk in one run. Prints requests/s, p99 and the ratios.

Needs wrk and nginx (Debian packages; installed with apt-get if missing).
Run: python3 benches/registry_load.py [seconds]
(SKILLPM_BIN / SKILLPM_REGISTRY_BIN: other client / server builds to use)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, skillpm_bin  # noqa: E402
from install import make_skill, start_registry  # noqa: E402

NGINX_CONF = """
worker_processes 2;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  etag on;
  default_type application/json;
  server {{
    listen 127.0.0.1:{port};
    root {root};
  }}
}}
"""


def ensure_tools():
    missing = [t for t in ("wrk", "nginx") if not shutil.which(t) and not os.path.exists("/usr/sbin/" + t)]
    if missing:
        subprocess.run(["apt-get", "install", "-y", "-qq"] + missing, check=True)


def wrk(url, seconds):
    out = subprocess.run(
        ["wrk", "-t2", "-c64", f"-d{seconds}s", "--latency", url],
        capture_output=True, text=True, check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, float(p99.group(1)) * scale, int(errors.group(1)) if errors else 0


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    ensure_tools()
    exe = os.environ.get("SKILLPM_BIN") or skillpm_bin()
    with tempfile.TemporaryDirectory() as tmp:
        # nginx workers run as an unprivileged user: let them read the files.
        os.chmod(tmp, 0o755)
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "cfg"))
        proc, url, token = start_registry(os.path.join(tmp, "data"),
                                          exe=os.environ.get("SKILLPM_REGISTRY_BIN"))
        nginx = None
        try:
            src = os.path.join(tmp, "src")
            for i in range(20):
                d = make_skill(src, f"load-{i:02d}")
                subprocess.run([exe, "publish", d, "--registry", url, "--token", token],
                               env=env, check=True, capture_output=True)
            name = "load-07"
            static = os.path.join(tmp, "static")
            os.makedirs(os.path.join(static, "index"))
            dl_dir = os.path.join(static, "api", "v1", "skills", name, "1.0.0")
            os.makedirs(dl_dir)
            with urllib.request.urlopen(f"{url}/index/{name}") as r:
                open(os.path.join(static, "index", name), "wb").write(r.read())
            with urllib.request.urlopen(f"{url}/api/v1/skills/{name}/1.0.0/download") as r:
                open(os.path.join(dl_dir, "download"), "wb").write(r.read())
            port = 18000 + os.getpid() % 1000
            conf = os.path.join(tmp, "nginx.conf")
            open(conf, "w").write(NGINX_CONF.format(tmp=tmp, port=port, root=static))
            nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
            nginx = subprocess.Popen([nginx_bin, "-c", conf, "-p", tmp],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            base_nginx = f"http://127.0.0.1:{port}"
            for path in (f"/index/{name}", f"/api/v1/skills/{name}/1.0.0/download"):
                with urllib.request.urlopen(base_nginx + path) as r:
                    assert r.status == 200, f"nginx cannot serve {path}: {r.status}"
            rows = []
            for label, path in (("index", f"/index/{name}"),
                                ("download", f"/api/v1/skills/{name}/1.0.0/download")):
                ours = wrk(url + path, seconds)
                theirs = wrk(base_nginx + path, seconds)
                rows.append((label, ours, theirs))
            print(f"{'endpoint':<10} {'skillpm-registry':>28} {'nginx (static)':>28} {'rps ratio':>10}")
            for label, (r1, p1, e1), (r2, p2, e2) in rows:
                print(f"{label:<10} {r1:>12.0f} req/s p99 {p1:>6.2f}ms {r2:>12.0f} req/s p99 {p2:>6.2f}ms {r1 / r2:>9.2f}x"
                      + (f"  (errors: {e1}/{e2})" if e1 or e2 else ""))
        finally:
            proc.terminate()
            proc.wait()
            if nginx:
                nginx.terminate()
                nginx.wait()


if __name__ == "__main__":
    main()
