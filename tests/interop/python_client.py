"""Drive a Trails server with the official Python MCP SDK (an independent client).

Usage: python_client.py stdio COMMAND [ARG...]  |  python_client.py http URL
Prints one JSON object describing what the SDK saw; the Rust test asserts on it.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


async def run(server) -> dict:
    report = {}
    async with Client(server) as client:
        tools = await client.list_tools()
        report["tools"] = sorted(tool.name for tool in tools.tools)
        search = next(tool for tool in tools.tools if tool.name == "requirements.search")
        dumped = search.model_dump(by_alias=True, exclude_none=True)
        report["search_meta"] = dumped.get("_meta", {}).get("trails")
        report["search_input"] = dumped["inputSchema"]
        report["search_annotations"] = dumped.get("annotations")

        created = await client.call_tool(
            "requirements.create",
            {"req_id": "REQ-1", "title": "Single sign-on", "status": "proposed", "priority": 1, "tags": ["auth"]},
        )
        report["create_is_error"] = bool(created.is_error)
        report["create_structured"] = created.structured_content

        found = await client.call_tool("requirements.search", {"text": "sign"})
        report["search_structured"] = found.structured_content

        try:
            await client.call_tool("requirements.search", {"text": "", "limit": 1000})
            report["invalid"] = "no error raised"
        except MCPError as error:
            report["invalid"] = {"code": error.error.code, "message": error.error.message, "data": error.error.data}

        try:
            await client.call_tool("trails_meta_requirements_stats", {})
            report["gated"] = "no error raised"
        except MCPError as error:
            report["gated"] = {"code": error.error.code, "message": error.error.message}
    return report


def main() -> None:
    mode, *rest = sys.argv[1:]
    if mode == "stdio":
        # The SDK passes the server only a safe subset of the environment; TRAILS_* must reach it.
        env = {k: v for k, v in os.environ.items() if k.startswith("TRAILS_")}
        server = StdioServerParameters(command=rest[0], args=rest[1:], env=env or None)
    else:
        server = rest[0]
    print(json.dumps(asyncio.run(run(server))))


if __name__ == "__main__":
    main()
