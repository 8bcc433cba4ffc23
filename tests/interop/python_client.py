"""Drive a Trails server with the official Python MCP SDK (an independent client).

Usage: python_client.py stdio COMMAND [ARG...]  |  python_client.py http URL
Prints one JSON object describing what the SDK saw; the Rust test asserts on it.
"""

import asyncio
import base64
import json
import os
import re
import sys
import warnings

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from pyld import jsonld

# Bytes no text codec passes through unchanged.
ATTACHMENT = bytes(range(256)) * 4


async def run(server) -> dict:
    report = {}
    async with Client(server) as client:
        tools = await client.list_tools()
        report["tools"] = sorted(tool.name for tool in tools.tools)
        # The pattern the Claude and OpenAI tool APIs enforce on every name a host passes on.
        report["names_hosts_refuse"] = [
            tool.name for tool in tools.tools if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool.name)
        ]
        search = next(tool for tool in tools.tools if tool.name == "requirements_search")
        dumped = search.model_dump(by_alias=True, exclude_none=True)
        report["search_meta"] = dumped.get("_meta", {}).get("trails")
        report["search_input"] = dumped["inputSchema"]
        report["search_annotations"] = dumped.get("annotations")

        created = await client.call_tool(
            "requirements_create",
            {
                "req_id": "REQ-1",
                "title": "Single sign-on",
                "status": "proposed",
                "priority": 1,
                "tags": ["auth"],
                "attachments": [{"media_type": "text/plain", "base64": base64.b64encode(ATTACHMENT).decode()}],
            },
        )
        report["create_is_error"] = bool(created.is_error)
        report["create_structured"] = created.structured_content
        # What the result returns, linked: the instance and its attachment, each read as a resource.
        links = [block for block in created.content if block.type == "resource_link"]
        report["create_links"] = [{"uri": link.uri, "name": link.name, "mime": link.mime_type} for link in links]
        report["link_reads"] = []
        for link in links:
            [contents] = (await client.read_resource(link.uri)).contents
            report["link_reads"].append({"uri": contents.uri, "mime": contents.mime_type})

        found = await client.call_tool("requirements_search", {"text": "sign"})
        report["search_structured"] = found.structured_content

        try:
            await client.call_tool("requirements_search", {"text": "", "limit": 1000})
            report["invalid"] = "no error raised"
        except MCPError as error:
            report["invalid"] = {"code": error.error.code, "message": error.error.message, "data": error.error.data}

        try:
            await client.call_tool("trails_meta_requirements_stats", {})
            report["gated"] = "no error raised"
        except MCPError as error:
            report["gated"] = {"code": error.error.code, "message": error.error.message}

        # A domain error (a declared precondition that does not hold) is a result the model reads,
        # not an exception.
        missing = await client.call_tool("requirements_update", {"req_id": "REQ-404", "title": "Renamed"})
        report["precondition_failed"] = {
            "is_error": bool(missing.is_error),
            "structured": missing.structured_content,
            "text": json.loads(missing.content[0].text),
        }

        # A dry run: through `_meta.trails.dry_run` (a tool with an output schema answers its verdict
        # as an error result, which the SDK does not check against that schema), and through the
        # `trails_dry_run` tool, whose output the verdict is.
        dry = await client.call_tool(
            "requirements_update", {"req_id": "REQ-404", "title": "Renamed"}, meta={"trails": {"dry_run": True}}
        )
        report["dry_run_meta"] = {"is_error": bool(dry.is_error), "text": json.loads(dry.content[0].text)}
        checked = await client.call_tool(
            "trails_dry_run", {"tool": "requirements_update", "arguments": {"req_id": "REQ-404", "title": "Renamed"}}
        )
        report["dry_run_tool"] = checked.structured_content

        # The knowledge graph as resources: list, templates, a page walk by `next`, one instance.
        for n in range(2, 6):
            await client.call_tool(
                "requirements_create",
                {"req_id": f"REQ-{n}", "title": f"Requirement {n}", "status": "proposed", "priority": n, "tags": []},
            )
        resources = await client.list_resources()
        report["resources"] = sorted(resource.uri for resource in resources.resources)
        templates = await client.list_resource_templates()
        report["templates"] = sorted(template.uri_template for template in templates.resource_templates)
        uri, walked, pages = "trails://kg/Requirement?limit=2", [], 0
        while uri:
            page = json.loads((await client.read_resource(uri)).contents[0].text)
            walked += [item["id"] for item in page["items"]]
            uri, pages = page["next"], pages + 1
        report["walked"], report["pages"] = walked, pages
        instance = (await client.read_resource("trails://kg/Requirement/REQ-1")).contents[0]
        document = json.loads(instance.text)
        # A real JSON-LD processor: expansion must keep every property of the document.
        [expanded] = jsonld.expand(document)
        report["instance"] = {
            "mime": instance.mime_type,
            "document": document,
            "terms": sorted(key for key in document if not key.startswith("@")),
            "expanded_terms": sorted(key for key in expanded if not key.startswith("@")),
            "expanded": expanded,
        }
        # The attachment: metadata in the document, bytes at its `uri` as blob contents.
        # (A list item of JSON is typed in place: `{"@value": …, "@type": "@json"}`.)
        [attachment] = [item["@value"] for item in document["https://example.org/req#attachments"]]
        [fetched] = (await client.read_resource(attachment["uri"])).contents
        report["attachment"] = {
            "shown": attachment,
            "mime": fetched.mime_type,
            "bytes_match": base64.b64decode(fetched.blob) == ATTACHMENT,
        }
        try:
            await client.read_resource("trails://kg/Requirement?where=priority=high")
            report["bad_where"] = "no error raised"
        except MCPError as error:
            report["bad_where"] = {"code": error.error.code, "data": error.error.data}

        # 2026-07-28 (what `mode="auto"` negotiated with this server): one `subscriptions/listen`.
        report["protocol"] = client.session.protocol_version if hasattr(client.session, "protocol_version") else None
        # A filtered page cannot be watched: it is left out of what the server honours.
        watched = ["trails://kg/Requirement", "trails://kg/Requirement/REQ-7", "trails://kg/Requirement?where=status=proposed"]
        async with client.listen(resource_subscriptions=watched) as sub:
            report["listen_honored"] = sorted(sub.honored.resource_subscriptions or [])
            await client.call_tool(
                "requirements_create",
                {"req_id": "REQ-7", "title": "Listened to", "status": "proposed", "priority": 2, "tags": []},
            )
            heard = set()
            with anyio_timeout(10):
                async for event in sub:
                    heard.add(getattr(event, "uri", type(event).__name__))
                    if {"trails://kg/Requirement", "trails://kg/Requirement/REQ-7"} <= heard:
                        break
            report["listen_updates"] = sorted(heard)
    return report


def anyio_timeout(seconds: float):
    import anyio

    return anyio.fail_after(seconds)


async def run_legacy(server) -> dict:
    """A 2025-11-25 session: `resources/subscribe` and `notifications/resources/updated`."""
    updates: list[str] = []
    received = asyncio.Event()

    async def on_message(message) -> None:
        note = getattr(message, "root", message)
        if getattr(note, "method", None) == "notifications/resources/updated":
            updates.append(note.params.uri)
            received.set()

    report = {}
    async with Client(server, mode="legacy", message_handler=on_message) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated for 2026-07-28; what 2025-* sessions have
            await client.subscribe_resource("trails://kg/Requirement")
            await client.subscribe_resource("trails://kg/Requirement/REQ-8")
            await client.subscribe_resource("trails://kg/types")
            try:
                await client.subscribe_resource("trails://kg/Requirement?where=status=proposed")
                report["filter_subscribe"] = "no error raised"
            except MCPError as error:
                report["filter_subscribe"] = {"code": error.error.code, "data": error.error.data}
        await client.call_tool(
            "requirements_create",
            {"req_id": "REQ-8", "title": "Subscribed to", "status": "proposed", "priority": 3, "tags": []},
        )
        expected = {"trails://kg/Requirement", "trails://kg/Requirement/REQ-8", "trails://kg/types"}
        async with asyncio.timeout(10):
            while not expected <= set(updates):
                received.clear()
                await received.wait()
        report["subscribed_updates"] = sorted(set(updates))
    return report


def main() -> None:
    mode, *rest = sys.argv[1:]
    if mode == "stdio":
        # The SDK passes the server only a safe subset of the environment; TRAILS_* must reach it.
        env = {k: v for k, v in os.environ.items() if k.startswith("TRAILS_")}
        server = StdioServerParameters(command=rest[0], args=rest[1:], env=env or None)
    else:
        server = rest[0]
    report = asyncio.run(run(server))
    report["legacy"] = asyncio.run(run_legacy(server))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
