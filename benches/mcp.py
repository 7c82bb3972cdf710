#!/usr/bin/env python3
"""`skillpm mcp` over 10 000 generated skills, through real client sessions.

1. `skills/list` over stdio with FastMCP's client on protocol 2026-07-28:
   a. one request (a page of 1 000 entries, each with its frontmatter and a
      manifest of digests), answered into a permissive model so FastMCP's
      per-entry validation is left out. Target (issue 12): p50 under 50 ms.
   b. the whole list (every page) with `client.list_skills()`, pydantic
      validation of every entry included.
2. Warm `search_skills` through the official Python SDK (2025-11-25):
   200 queries x 5 rounds, each `tools/call` timed on its own.
   Target: p99 under 5 ms.
Startup (discovery, parse, reading and hashing every file) is reported too,
and both requests on a bare pipe (one JSON line each way, no client
library), which is the server's own cost plus the pipe.

The tree and the queries are benches/search.py's (keywords, verbs, phrases
and patterns as real collections carry them).
Needs: python3 -m pip install 'fastmcp-slim[client]==4.1.6' mcp==2.3.0
Run: python3 benches/mcp.py   (SKILLPM_BIN=path skips the release build)
"""
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

# This file is named like the `mcp` package: look for the benchmark helpers
# after site-packages, so `import mcp` finds the SDK.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE] + [HERE]
import mcp_types  # noqa: E402
from fastmcp import Client as FastClient  # noqa: E402
from fastmcp.client.transports import StdioTransport  # noqa: E402
from fastmcp.skills.client import SkillsClientExtension  # noqa: E402
from fastmcp.skills.models import ListSkillsParams, ListSkillsRequest  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from pydantic import ConfigDict  # noqa: E402

# After the SDKs: search.py puts this directory first on sys.path again.
from common import isolated_env, line_rpc, skillpm_bin  # noqa: E402
from search import make_tree, queries  # noqa: E402


class RawListSkills(mcp_types.Result):
    """Accepts the result as sent, without per-entry validation."""

    model_config = ConfigDict(extra="allow")


def pct(samples, p):
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def ms(x):
    return f"{x * 1000:.1f} ms"


async def bench_list(exe, project, env, rounds):
    transport = StdioTransport(command=exe, args=["-C", project, "mcp"], env=env)
    start = time.perf_counter()
    async with FastClient(transport, mode="auto", extensions=[SkillsClientExtension()]) as c:
        ready = time.perf_counter() - start
        count = len(await c.list_skills())
        walk, page = [], []
        for _ in range(rounds):
            t = time.perf_counter()
            assert len(await c.list_skills()) == count
            walk.append(time.perf_counter() - t)
            req = ListSkillsRequest(params=ListSkillsParams())
            t = time.perf_counter()
            r = await c.session.send_request(req, RawListSkills)
            page.append(time.perf_counter() - t)
            per_page = len(r.model_extra["skills"])
    return ready, count, per_page, walk, page


def wire(exe, project, env, qs, rounds):
    """The same two requests on a bare pipe, one JSON line each way: the
    server's own cost plus the pipe, without any client library."""
    p = subprocess.Popen([exe, "-C", project, "mcp"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    rpc = line_rpc(p)

    rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}})
    rpc("notifications/initialized", note=True)
    lst, srch = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        rpc("skills/list")
        lst.append(time.perf_counter() - t)
    for _ in range(5):
        for q in qs:
            t = time.perf_counter()
            rpc("tools/call", {"name": "search_skills", "arguments": {"query": q, "limit": 10}})
            srch.append(time.perf_counter() - t)
    p.stdin.close()
    p.wait()
    return lst, srch


async def bench_search(exe, project, env, qs, rounds):
    params = StdioServerParameters(command=exe, args=["-C", project, "mcp"], env=env)
    async with Client(params, mode="legacy") as c:
        for q in qs[:20]:
            await c.call_tool("search_skills", {"query": q, "limit": 10})
        samples = []
        for _ in range(rounds):
            for q in qs:
                t = time.perf_counter()
                r = await c.call_tool("search_skills", {"query": q, "limit": 10})
                samples.append(time.perf_counter() - t)
                assert not r.is_error
    return samples


def main():
    # SKILLPM_BIN: a release binary built elsewhere (e.g. from a worktree).
    exe = os.environ.get("SKILLPM_BIN") or skillpm_bin()
    n = 10000
    with tempfile.TemporaryDirectory() as tmp:
        env = isolated_env(tmp)
        env["PATH"] = "/usr/bin:/bin"
        project = os.path.join(tmp, "p")
        make_tree(project, n)
        ready, count, per_page, walk, page = asyncio.run(bench_list(exe, project, env, 30))
        print(f"skillpm mcp, {n} generated skills ({count} in skills/list, {per_page} per page)")
        print(f"  start + discover handshake: {ms(ready)} (discovery, parse, read and hash every file)")
        print(f"  skills/list, one page, FastMCP session: p50 {ms(statistics.median(page))}, "
              f"p90 {ms(pct(page, 90))}  (target p50 < 50 ms)")
        print(f"  skills/list, all {count} (every page, pydantic per entry), FastMCP: "
              f"p50 {ms(statistics.median(walk))}")
        samples = asyncio.run(bench_search(exe, project, env, queries(200), 5))
        print(f"  search_skills warm, {len(samples)} tools/call, Python SDK session: "
              f"p50 {ms(statistics.median(samples))}, p99 {ms(pct(samples, 99))}  (target p99 < 5 ms)")
        lst, srch = wire(exe, project, env, queries(200), 30)
        print(f"  bare pipe (server + pipe, no client library): skills/list page p50 "
              f"{ms(statistics.median(lst))}; search_skills p50 {ms(statistics.median(srch))}, "
              f"p99 {ms(pct(srch, 99))}")

if __name__ == "__main__":
    main()
