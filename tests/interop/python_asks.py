"""Drive the conformance fixture app (`examples/conformance`) with the official Python MCP SDK:
a tool that asks the user, the client's model and its roots (input-required results from
2026-07-28 on, server-to-client requests in a 2025 session), a tool that reports progress, a
prompt with arguments and one that asks.

Usage: python_asks.py MODE stdio COMMAND [ARG...]  |  python_asks.py MODE http URL
MODE: `auto` (2026-07-28, found by server/discover) or `legacy` (a 2025 initialize session).
Prints one JSON object describing what the SDK saw; the Rust test asserts on it.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters, types


async def run(server, mode: str) -> dict:
    report = {"asked": [], "progress": []}

    async def elicit(context, params: types.ElicitRequestParams):
        report["asked"].append({"method": "elicitation/create", "message": params.message})
        properties = params.requested_schema.get("properties", {})
        if "name" in properties:
            return types.ElicitResult(action="accept", content={"name": "Ada"})
        if "context" in properties:
            return types.ElicitResult(action="accept", content={"context": "release notes"})
        if "username" in properties:
            return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.org"})
        return types.ElicitResult(action="decline")

    async def sample(context, params: types.CreateMessageRequestParams):
        report["asked"].append({"method": "sampling/createMessage", "max_tokens": params.max_tokens})
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Hello"), model="python-test"
        )

    async def roots(context):
        report["asked"].append({"method": "roots/list"})
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async def progress(done, total, message):
        report["progress"].append([done, total, message])

    async with Client(
        server,
        mode=mode,
        elicitation_callback=elicit,
        sampling_callback=sample,
        list_roots_callback=roots,
    ) as client:
        report["protocol"] = str(client.session.protocol_version) if client.session.protocol_version else None
        if mode == "auto":
            asked = await client.call_tool("test_input_required_result_multiple_inputs", {})
        else:
            asked = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        report["asked_result"] = [block.text for block in asked.content if block.type == "text"]
        report["asked_is_error"] = bool(asked.is_error)

        progressed = await client.call_tool("test_tool_with_progress", {}, progress_callback=progress)
        report["progress_result"] = [block.text for block in progressed.content if block.type == "text"]

        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "one", "arg2": "two"})
        report["prompt"] = [message.content.text for message in prompt.messages]
        if mode == "auto":
            asking = await client.get_prompt("test_input_required_result_prompt", {})
            report["asking_prompt"] = [message.content.text for message in asking.messages]
    return report


def main() -> None:
    mode, transport, *rest = sys.argv[1:]
    if transport == "stdio":
        server = StdioServerParameters(command=rest[0], args=rest[1:])
    else:
        server = rest[0]
    print(json.dumps(asyncio.run(run(server, mode))))


if __name__ == "__main__":
    main()
