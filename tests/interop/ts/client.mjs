// Drive a Trails server with the official TypeScript MCP SDKs (independent clients):
// `@modelcontextprotocol/sdk` 1.x as a 2025-11-25 session (resources, pages by `next`,
// resources/subscribe) and `@modelcontextprotocol/client` 2.x at 2026-07-28 (subscriptions/listen).
//
// Usage: node client.mjs stdio COMMAND [ARG...]  |  node client.mjs http URL
// Prints one JSON object describing what the SDKs saw; the Rust test asserts on it.

import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, ...rest] = process.argv.slice(2);
const info = { name: 'trails-interop-ts', version: '0.0.0' };

// `data` names the stdio server's own store: each stdio client starts a server of its own.
function transport(Stdio, Http, data) {
  const env = { ...process.env, TRAILS_KG_PATH: `${process.env.TRAILS_KG_PATH}/${data}` };
  return mode === 'stdio'
    ? new Stdio({ command: rest[0], args: rest.slice(1), env, stderr: 'inherit' })
    : new Http(new URL(rest[0]));
}

function requirement(id, title) {
  return { req_id: id, title, status: 'proposed', priority: 2, tags: [] };
}

/** Resolves once every URI in `expected` is in `seen`, or fails after ten seconds. */
function waitFor(seen, expected, what) {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const check = () => {
      if (expected.every((uri) => seen.has(uri))) return resolve();
      if (Date.now() > deadline) return reject(new Error(`${what}: got ${[...seen]}`));
      setTimeout(check, 20);
    };
    check();
  });
}

async function errorOf(promise) {
  try {
    await promise;
    return 'no error raised';
  } catch (error) {
    return { code: error.code, message: error.message, data: error.data ?? null };
  }
}

async function legacy() {
  const report = {};
  const client = new LegacyClient(info);
  const updated = new Set();
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
    updated.add(n.params.uri);
  });
  await client.connect(transport(LegacyStdio, LegacyHttp, 'legacy'));
  report.protocol = client.transport?.protocolVersion ?? null;
  const names = (await client.listTools()).tools.map((t) => t.name);
  report.tool_count = names.length;
  // The pattern the Claude and OpenAI tool APIs enforce on every name a host passes on.
  report.names_hosts_refuse = names.filter((name) => !/^[a-zA-Z0-9_-]{1,64}$/.test(name));
  // A domain error on a tool with an outputSchema (a declared precondition that does not hold):
  // the SDK must hand it over, not throw.
  try {
    const missing = await client.callTool({ name: 'requirements_update', arguments: { req_id: 'REQ-404', title: 'Renamed' } });
    report.precondition_failed = { is_error: missing.isError ?? false, structured: missing.structuredContent ?? null, text: JSON.parse(missing.content[0].text) };
  } catch (error) {
    report.precondition_failed = { thrown: String(error) };
  }
  for (const n of [1, 2, 3, 4, 5]) {
    const created = await client.callTool({ name: 'requirements_create', arguments: requirement(`REQ-${n}`, `Requirement ${n}`) });
    if (n === 1) {
      // The created instance, linked: a `resource_link` block the SDK parses, read as the resource it names.
      report.create_links = created.content.filter((c) => c.type === 'resource_link').map((c) => ({ uri: c.uri, name: c.name, mime: c.mimeType }));
      report.link_reads = [];
      for (const link of report.create_links) {
        const [contents] = (await client.readResource({ uri: link.uri })).contents;
        report.link_reads.push({ uri: contents.uri, mime: contents.mimeType });
      }
    }
  }
  report.resources = (await client.listResources()).resources.map((r) => r.uri).sort();
  report.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
  let uri = 'trails://kg/Requirement?limit=2';
  report.walked = [];
  report.pages = 0;
  while (uri) {
    const page = JSON.parse((await client.readResource({ uri })).contents[0].text);
    report.walked.push(...page.items.map((item) => item.id));
    uri = page.next;
    report.pages += 1;
  }
  const instance = (await client.readResource({ uri: 'trails://kg/Requirement/REQ-1' })).contents[0];
  report.instance = { mime: instance.mimeType, id: JSON.parse(instance.text)['@id'] };
  report.bad_where = await errorOf(client.readResource({ uri: 'trails://kg/Requirement?where=priority=high' }));

  for (const uri of ['trails://kg/Requirement', 'trails://kg/Requirement/REQ-8', 'trails://kg/types']) {
    await client.subscribeResource({ uri });
  }
  report.filter_subscribe = await errorOf(
    client.subscribeResource({ uri: 'trails://kg/Requirement?where=status=proposed' }),
  );
  await client.callTool({ name: 'requirements_create', arguments: requirement('REQ-8', 'Subscribed to') });
  const expected = ['trails://kg/Requirement', 'trails://kg/Requirement/REQ-8', 'trails://kg/types'];
  await waitFor(updated, expected, 'resources/subscribe updates');
  report.subscribed_updates = [...updated].sort();
  await client.close();
  return report;
}

async function modern() {
  const report = {};
  const client = new Client(info, { versionNegotiation: { mode: 'auto' } });
  const updated = new Set();
  client.setNotificationHandler('notifications/resources/updated', async (n) => {
    updated.add(n.params.uri);
  });
  await client.connect(transport(StdioClientTransport, StreamableHTTPClientTransport, 'modern'));
  report.protocol = client.getNegotiatedProtocolVersion();
  const watched = ['trails://kg/Requirement', 'trails://kg/Requirement/REQ-7'];
  const subscription = await client.listen({ resourceSubscriptions: watched });
  report.honored = [...(subscription.honoredFilter.resourceSubscriptions ?? [])].sort();
  const created = await client.callTool({ name: 'requirements_create', arguments: requirement('REQ-7', 'Listened to') });
  report.create_links = created.content.filter((c) => c.type === 'resource_link').map((c) => c.uri);
  await waitFor(updated, watched, 'subscriptions/listen updates');
  report.listen_updates = [...updated].sort();
  await subscription.close();
  await client.close();
  return report;
}

const report = { legacy: await legacy(), modern: await modern() };
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(0);
