"""Drives `skillpm mcp`'s prompts (skill commands) with a client nobody
here wrote: the official Python SDK (`mcp` 2.3.0, 2025-11-25 revision) or
FastMCP's client (`fastmcp-slim[client]` 4.1.6, 2026-07-28 revision).

Job keys (besides `server`, see common.py):
  client: "mcp" or "fastmcp"
  gets:   [{"name", "arguments"}], each sent as prompts/get

Report: the protocol, whether the server announced prompts, every listed
prompt as the client parsed it, and for each get either its messages or
the JSON-RPC error code.

Usage: python3 prompts_client.py < job.json > report.json
"""

import asyncio

from common import emit, error_text, job


def dump(m):
    return m.model_dump(mode="json", by_alias=True, exclude_none=True)


async def exercise(c, j, report):
    listed = await c.list_prompts()
    prompts = listed if isinstance(listed, list) else listed.prompts
    report["prompts"] = [dump(p) for p in prompts]
    report["gets"] = []
    for g in j["gets"]:
        try:
            r = await c.get_prompt(g["name"], g.get("arguments"))
            report["gets"].append({
                "description": r.description,
                "messages": [{"role": m.role, "text": m.content.text} for m in r.messages],
            })
        except Exception as e:  # an MCP error: keep its JSON-RPC code
            error = getattr(e, "error", None)
            report["gets"].append({"code": getattr(error, "code", None), "error": error_text(e)})


async def main():
    j = job()
    s = j["server"]
    report = {"client": j["client"]}
    if j["client"] == "mcp":
        from mcp import Client, StdioServerParameters

        server = StdioServerParameters(command=s["command"][0], args=s["command"][1:], env=s["env"], cwd=s["cwd"])
        async with Client(server, mode="legacy") as c:
            report["protocol"] = c.protocol_version
            report["announced"] = c.server_capabilities.prompts is not None
            await exercise(c, j, report)
    else:
        from fastmcp import Client
        from fastmcp.client.transports import StdioTransport

        transport = StdioTransport(command=s["command"][0], args=s["command"][1:], env=s["env"], cwd=s["cwd"])
        async with Client(transport, mode="auto") as c:
            report["protocol"] = c.protocol_version
            await exercise(c, j, report)
    emit(report)


asyncio.run(main())
