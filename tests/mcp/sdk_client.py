"""Drives `skillpm mcp` with the official Python SDK (`mcp` 2.3.0) as a
plain resources/tools host on the 2025-11-25 revision (initialize
handshake, notifications on the session, resources/subscribe).

Usage: python3 sdk_client.py < job.json > report.json (see common.py).
"""

import asyncio

import anyio
import mcp_types
from mcp import Client, StdioServerParameters

from common import apply_change, b64, call_tools, content_bytes, emit, error_text, job


async def main():
    j = job()
    events = []
    arrived = anyio.Event()
    state = {"arrived": arrived}

    async def on_message(message):
        if isinstance(message, mcp_types.ResourceListChangedNotification):
            events.append(["list_changed", None])
            state["arrived"].set()
        elif isinstance(message, mcp_types.ResourceUpdatedNotification):
            events.append(["updated", str(message.params.uri)])
            state["arrived"].set()

    s = j["server"]
    server = s["url"] if "url" in s else StdioServerParameters(
        command=s["command"][0], args=s["command"][1:], env=s["env"], cwd=s["cwd"])
    report = {"client": "mcp", "resources": {}, "hostile": {}, "changes": []}
    async with Client(server, mode="legacy", message_handler=on_message) as c:
        report["protocol"] = c.protocol_version
        caps = c.server_capabilities
        report["extensions"] = sorted((caps.extensions or {}).keys())
        listed = await c.list_resources()
        report["listed"] = sorted(str(r.uri) for r in listed.resources)
        for uri in report["listed"]:
            r = await c.read_resource(uri)
            report["resources"][uri] = b64(b"".join(content_bytes(x) for x in r.contents))
        tools = await c.list_tools()
        report["tools"] = sorted(t.name for t in tools.tools)
        await call_tools(c, j, report)
        r = await c.call_tool("load_skill", {"name": "no-such-skill"})
        report["load_unknown_is_error"] = bool(r.is_error)
        for uri in j.get("hostile", []):
            try:
                r = await c.read_resource(uri)
                report["hostile"][uri] = {"refused": False, "got": b64(b"".join(content_bytes(x) for x in r.contents))}
            except Exception as e:  # the refusal is an MCP error
                report["hostile"][uri] = {"refused": True, "error": error_text(e)}
        for ch in j.get("changes", []):
            await c.subscribe_resource(ch["uri"])
            events.clear()
            state["arrived"] = anyio.Event()
            apply_change(ch)
            notified = False
            with anyio.move_on_after(j.get("timeout", 2.0)):
                await state["arrived"].wait()
                notified = True
            # Let the updated notification that follows list_changed land.
            await anyio.sleep(0.2)
            out = {"notified": notified, "events": list(events)}
            try:
                r = await c.read_resource(ch["uri"])
                out["after"] = b64(b"".join(content_bytes(x) for x in r.contents))
            except Exception as e:
                out["error"] = error_text(e)
            listed = await c.list_resources()
            out["listed"] = sorted(str(r.uri) for r in listed.resources)
            report["changes"].append(out)
    emit(report)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(), 120))
