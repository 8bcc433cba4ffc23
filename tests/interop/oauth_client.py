"""The official MCP Python SDK's OAuth client against a Trails app with `[auth.oauth]`
(tests/tests/it/oauth.rs): it calls a builder tool without a token, is answered 401, discovers
the protected resource metadata and the authorization server from the challenge, obtains a token
by client credentials for the resource, and calls again.

    python oauth_client.py MCP_URL ISSUER TOOL ARGUMENTS_JSON

Prints a JSON report: the tool result, and the requests the client sent (method, path, status).
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.auth import TokenStorage
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


async def main(url, issuer, tool, arguments):
    seen = []

    async def record(response):
        seen.append([response.request.method, response.request.url.path, response.status_code])

    auth = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=Memory(),
        client_id="builder",
        client_secret="builder-secret",
        scope="mcp:runtime mcp:builder",
        issuer=issuer,
    )
    async with httpx2.AsyncClient(auth=auth, event_hooks={"response": [record]}) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool(tool, arguments)
    report = {"result": result.model_dump(mode="json", by_alias=True, exclude_none=True), "requests": seen}
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])))
