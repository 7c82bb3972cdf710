#!/usr/bin/env python3
"""`skillpm mcp` over 10 000 generated skills, through real client sessions.

1. `skills/list` (one page holding all 10 000 entries, each with its
   frontmatter and a manifest of digests), timed request by request over
   stdio with FastMCP's client on protocol 2026-07-28:
   a. end to end: `client.list_skills_mcp()`, including FastMCP's pydantic
      validation of every entry (client-side cost);
   b. round trip: the same request through the same session, answered into
      a permissive model, so the figure is the server plus the transport
      plus JSON decoding.
   Target (issue 12): p50 under 50 ms.
2. Warm `search_skills` through the official Python SDK (2025-11-25):
   200 queries x 5 rounds, each `tools/call` timed on its own.
   Target: p99 under 5 ms.
Startup (discovery, parse, reading and hashing every file) is reported too.

The tree and the queries are benches/search.py's (keywords, verbs, phrases
and patterns as real collections carry them).
Needs: python3 -m pip install 'fastmcp-slim[client]==4.1.6' mcp==2.3.0
Run: python3 benches/mcp.py   (SKILLPM_BIN=path skips the release build)
"""
import asyncio
import os
import statistics
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
from common import isolated_env, skillpm_bin  # noqa: E402
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
        first = await c.list_skills_mcp()
        count = len(first.skills)
        full, raw = [], []
        for _ in range(rounds):
            t = time.perf_counter()
            await c.list_skills_mcp()
            full.append(time.perf_counter() - t)
            req = ListSkillsRequest(params=ListSkillsParams())
            t = time.perf_counter()
            r = await c.session.send_request(req, RawListSkills)
            raw.append(time.perf_counter() - t)
            assert len(r.model_extra["skills"]) == count
    return ready, count, full, raw


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
        ready, count, full, raw = asyncio.run(bench_list(exe, project, env, 30))
        print(f"skillpm mcp, {n} generated skills ({count} in skills/list)")
        print(f"  start + discover handshake: {ms(ready)} (discovery, parse, read and hash every file)")
        print(f"  skills/list round trip (server + transport + JSON): p50 {ms(statistics.median(raw))}, "
              f"p90 {ms(pct(raw, 90))}  (target p50 < 50 ms)")
        print(f"  skills/list end to end in FastMCP (+ pydantic per entry): "
              f"p50 {ms(statistics.median(full))}, p90 {ms(pct(full, 90))}")
        samples = asyncio.run(bench_search(exe, project, env, queries(200), 5))
        print(f"  search_skills warm, {len(samples)} tools/call: p50 {ms(statistics.median(samples))}, "
              f"p99 {ms(pct(samples, 99))}, max {ms(max(samples))}  (target p99 < 5 ms)")


if __name__ == "__main__":
    main()
