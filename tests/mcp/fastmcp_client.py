"""Drives `skillpm mcp` with FastMCP's client (`fastmcp-slim[client]`
4.1.6), which speaks the MCP Skills extension (SEP-2640) on the
2026-07-28 revision: server/discover instead of initialize, skills/list,
skills/get, resources/read, tools/call, and change notifications over a
`subscriptions/listen` stream.

Usage: python3 fastmcp_client.py < job.json > report.json (see common.py).
"""

import asyncio
import json

import anyio
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from fastmcp.skills.client import SkillsClientExtension
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, listen

from common import apply_change, b64, call_tools, content_bytes, emit, error_text, job


def skill_dict(s):
    return s.model_dump(mode="json", by_alias=True, exclude_none=True)


async def read(c, uri):
    contents = await c.read_resource(uri)
    return b"".join(content_bytes(x) for x in contents)


async def main():
    j = job()
    s = j["server"]
    if "url" in s:
        transport = StreamableHttpTransport(s["url"])
    else:
        transport = StdioTransport(command=s["command"][0], args=s["command"][1:], env=s["env"], cwd=s["cwd"])
    report = {"client": "fastmcp", "resources": {}, "hostile": {}, "changes": []}
    async with Client(transport, mode="auto", extensions=[SkillsClientExtension()]) as c:
        report["protocol"] = c.protocol_version
        skills = await c.list_skills()
        report["skills"] = [skill_dict(x) for x in skills]
        report["got"] = [skill_dict(await c.get_skill(x.uri)) for x in skills]
        for x in skills:
            for f in x.resources:
                report["resources"][f.uri] = b64(await read(c, f.uri))
        # Skills outside skills/list are still plain resources.
        for r in await c.list_resources():
            uri = str(r.uri)
            if uri not in report["resources"]:
                report["resources"][uri] = b64(await read(c, uri))
        report["index"] = json.loads((await read(c, "skill://index.json")).decode("utf-8"))
        await call_tools(c, j, report)
        for uri in j.get("hostile", []):
            try:
                report["hostile"][uri] = {"refused": False, "got": b64(await read(c, uri))}
            except Exception as e:
                report["hostile"][uri] = {"refused": True, "error": error_text(e)}
        for ch in j.get("changes", []):
            out = {"events": []}
            async with listen(c.session, resources_list_changed=True, resource_subscriptions=[ch["uri"]]) as sub:
                apply_change(ch)
                notified = False
                with anyio.move_on_after(j.get("timeout", 2.0)):
                    async for ev in sub:
                        if isinstance(ev, ResourceUpdated):
                            out["events"].append(["updated", ev.uri])
                        elif isinstance(ev, ResourcesListChanged):
                            out["events"].append(["list_changed", None])
                        notified = True
                        break
            out["notified"] = notified
            try:
                out["after"] = b64(await read(c, ch["uri"]))
            except Exception as e:
                out["error"] = error_text(e)
            skills = await c.list_skills()
            out["skills"] = [skill_dict(x) for x in skills]
            report["changes"].append(out)
    emit(report)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(), 120))
