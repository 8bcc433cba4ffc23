"""Drive the conformance fixture app's task tools (`examples/conformance`) with the official
Python MCP SDK at 2026-07-28. The SDK has no Tasks helper; its extension surface does: a
`ClientExtension` for `io.modelcontextprotocol/tasks` advertises the extension on every request
and claims results of `resultType: "task"`, resolving each by polling `tasks/get` (through the
session's own `send_request`, which frames the request, its `_meta` and its `Mcp-Name`), answering
a task's questions with `tasks/update`, and returning the task's `CallToolResult`.

Usage: python_tasks.py URL. Prints one JSON object describing what the SDK saw.
"""

import asyncio
import json
import sys
from typing import Any, Literal

from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"
ANY = TypeAdapter(dict[str, Any])


class TaskHandle(Result):
    """A `CreateTaskResult` (SEP-2663): a task's seed state, flat."""

    result_type: Literal["task"]
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any] | None = None


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class UpdateTask(Request[TaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: TaskParams
    name_param = "taskId"


class Tasks(ClientExtension):
    identifier = TASKS

    def __init__(self, report: dict):
        self.report = report

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        seen = self.report.setdefault("statuses", {}).setdefault(ctx.tool_name, [handle.status])
        self.report.setdefault("ttl_ms", handle.ttl_ms)
        answered = set()
        while True:
            await asyncio.sleep(max(handle.poll_interval_ms or 100, 100) / 1000 / 4)
            task = await ctx.session.send_request(GetTask(params=TaskParams(task_id=handle.task_id)), ANY)
            if seen[-1] != task["status"]:
                seen.append(task["status"])
            if task["status"] == "input_required":
                answers = {}
                for key, asked in task.get("inputRequests", {}).items():
                    if key in answered:
                        continue
                    self.report.setdefault("asked", []).append([key, asked["method"], asked["params"]["message"]])
                    answers[key] = {"action": "accept", "content": {"confirm": True}}
                    answered.add(key)
                if answers:
                    ack = await ctx.session.send_request(
                        UpdateTask(params=TaskParams(task_id=handle.task_id, input_responses=answers)), ANY
                    )
                    self.report.setdefault("acks", []).append(ack)
            elif task["status"] == "completed":
                return CallToolResult.model_validate(task["result"])
            elif task["status"] in ("failed", "cancelled"):
                raise RuntimeError(f"task {handle.task_id} {task['status']}: {task.get('error')}")


async def run(url: str) -> dict:
    report: dict = {}

    # Declares elicitation (a task's question needs it); a task asks through `tasks/get`, not here.
    async def elicit(context, params):
        report.setdefault("elicited_directly", []).append(params.message)
        raise RuntimeError("a task's question reached the elicitation callback")

    async with Client(url, mode="auto", extensions=[Tasks(report)], elicitation_callback=elicit) as client:
        report["protocol"] = str(client.session.protocol_version)
        fast = await client.call_tool("greet", {"name": "Ada"})
        report["greet"] = [block.text for block in fast.content if block.type == "text"]
        slow = await client.call_tool("slow_compute", {"seconds": 2, "label": "python"})
        report["slow"] = [block.text for block in slow.content if block.type == "text"]
        confirmed = await client.call_tool("confirm_delete", {"filename": "notes.txt"})
        report["confirmed"] = [block.text for block in confirmed.content if block.type == "text"]
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(sys.argv[1]))))
