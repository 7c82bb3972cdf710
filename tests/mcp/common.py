"""Shared by the MCP client drivers: the job comes as JSON on stdin, the
findings go out as JSON on stdout; the Rust test (tests/mcp.rs) asserts.

Job keys:
  server:  {"command": [...], "env": {...}, "cwd": "..."} for stdio, or
           {"url": "http://host:port/mcp"} for Streamable HTTP
  hostile: URIs that must be refused
  load:    a skill name for the load_skill tool
  search:  a query for the search_skills tool
  changes: [{"path", "content_b64" (absent = delete), "uri", "skill"}]
           applied one at a time; after each the driver waits up to
           `timeout` seconds for a change notification, then re-reads
           `uri` (and `skill` via skills/get where the client can).
"""

import base64
import json
import os
import shutil
import sys


def job():
    return json.load(sys.stdin)


def emit(report):
    json.dump(report, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


def b64(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return base64.b64encode(data).decode("ascii")


def content_bytes(c):
    """The bytes of one resources/read content item (text or blob)."""
    text = getattr(c, "text", None)
    if text is not None:
        return text.encode("utf-8")
    return base64.b64decode(getattr(c, "blob"))


def apply_change(change):
    """Writes (or deletes) a file the way an editor would: whole file."""
    path = change["path"]
    if "content_b64" in change:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(change["content_b64"]))
    elif os.path.isdir(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def error_text(e):
    return f"{type(e).__name__}: {e}"


async def call_tools(c, j, report):
    """The three tools, as a host without the Skills extension uses them."""
    r = await c.call_tool("list_skills", {})
    report["tool_list"] = json.loads(r.content[0].text)
    if "search" in j:
        r = await c.call_tool("search_skills", {"query": j["search"], "limit": 5})
        report["search"] = json.loads(r.content[0].text)
    if "load" in j:
        r = await c.call_tool("load_skill", {"name": j["load"]})
        report["load"] = r.content[0].text
