"""Drives `skillpm mcp`'s prompts (skill commands) with a client nobody
here wrote: the official Python SDK (`mcp` 2.3.0, 2025-11-25 revision) or
FastMCP's client (`fastmcp-slim[client]` 4.1.6, 2026-07-28 revision).

Job keys (besides `server`, see common.py):
  client: "mcp" or "fastmcp"
  gets:   [{"name", "arguments"}], each sent as prompts/get
  change: optional (mcp client only), a file to write after the gets, as
          common.apply_change does; the report then says whether
          notifications/prompts/list_changed arrived and lists the
          prompts again

Report: the protocol, whether the server announced prompts, every listed
prompt as the client parsed it, and for each get either its messages or
the JSON-RPC error code.

Usage: python3 prompts_client.py < job.json > report.json
"""

import asyncio

import anyio

from common import apply_change, emit, error_text, job


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

        import mcp_types

        arrived = anyio.Event()

        async def on_message(message):
            if isinstance(message, mcp_types.PromptListChangedNotification):
                arrived.set()

        server = StdioServerParameters(command=s["command"][0], args=s["command"][1:], env=s["env"], cwd=s["cwd"])
        async with Client(server, mode="legacy", message_handler=on_message) as c:
            report["protocol"] = c.protocol_version
            prompts = c.server_capabilities.prompts
            report["announced"] = prompts is not None
            report["announced_list_changed"] = bool(prompts and prompts.list_changed)
            await exercise(c, j, report)
            if "change" in j:
                apply_change(j["change"])
                with anyio.move_on_after(j.get("timeout", 5.0)):
                    await arrived.wait()
                report["prompts_notified"] = arrived.is_set()
                listed = await c.list_prompts()
                report["after"] = sorted(p.name for p in listed.prompts)
    else:
        from fastmcp import Client
        from fastmcp.client.transports import StdioTransport

        transport = StdioTransport(command=s["command"][0], args=s["command"][1:], env=s["env"], cwd=s["cwd"])
        async with Client(transport, mode="auto") as c:
            report["protocol"] = c.protocol_version
            await exercise(c, j, report)
    emit(report)


asyncio.run(main())
