// Drive the conformance fixture app (`examples/conformance`) with the official TypeScript MCP
// SDKs: a tool that asks the user, the client's model and its roots, a tool reporting progress,
// and prompts — `@modelcontextprotocol/client` 2.x at 2026-07-28 (input-required results, answered
// by its handlers and retried), `@modelcontextprotocol/sdk` 1.x as a 2025-11-25 session
// (server-to-client requests).
//
// Usage: node asks.mjs stdio COMMAND [ARG...]  |  node asks.mjs http URL
// Prints one JSON object describing what the SDKs saw; the Rust test asserts on it.

import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, ...rest] = process.argv.slice(2);
const info = { name: 'trails-interop-ts', version: '0.0.0' };

function transport(Stdio, Http) {
  return mode === 'stdio'
    ? new Stdio({ command: rest[0], args: rest.slice(1), stderr: 'inherit' })
    : new Http(new URL(rest[0]));
}

function answer(params) {
  const properties = params.requestedSchema?.properties ?? {};
  if ('name' in properties) return { action: 'accept', content: { name: 'Ada' } };
  if ('context' in properties) return { action: 'accept', content: { context: 'release notes' } };
  if ('username' in properties) return { action: 'accept', content: { username: 'ada', email: 'ada@example.org' } };
  return { action: 'decline' };
}

const texts = (result) => result.content.filter((block) => block.type === 'text').map((block) => block.text);

async function modern() {
  const report = { asked: [], progress: [] };
  const client = new Client(info, {
    versionNegotiation: { mode: 'auto' },
    capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
  });
  client.setRequestHandler('elicitation/create', async (request) => {
    report.asked.push('elicitation/create');
    return answer(request.params);
  });
  client.setRequestHandler('sampling/createMessage', async () => {
    report.asked.push('sampling/createMessage');
    return { model: 'ts-test', role: 'assistant', content: { type: 'text', text: 'Hello' } };
  });
  client.setRequestHandler('roots/list', async () => {
    report.asked.push('roots/list');
    return { roots: [{ uri: 'file:///work', name: 'work' }] };
  });
  await client.connect(transport(StdioClientTransport, StreamableHTTPClientTransport));
  report.protocol = client.getNegotiatedProtocolVersion();
  const asked = await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} });
  report.asked_result = texts(asked);
  const progressed = await client.callTool(
    { name: 'test_tool_with_progress', arguments: {} },
    { onprogress: (p) => report.progress.push([p.progress, p.total ?? null]) },
  );
  report.progress_result = texts(progressed);
  const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'one', arg2: 'two' } });
  report.prompt = prompt.messages.map((message) => message.content.text);
  const asking = await client.getPrompt({ name: 'test_input_required_result_prompt', arguments: {} });
  report.asking_prompt = asking.messages.map((message) => message.content.text);
  await client.close();
  return report;
}

async function legacy() {
  const report = { asked: [], progress: [] };
  const client = new LegacyClient(info, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    report.asked.push(request.params.message);
    return answer(request.params);
  });
  await client.connect(transport(LegacyStdio, LegacyHttp));
  const asked = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
  report.asked_result = texts(asked);
  const progressed = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
    onprogress: (p) => report.progress.push([p.progress, p.total ?? null]),
  });
  report.progress_result = texts(progressed);
  const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'one', arg2: 'two' } });
  report.prompt = prompt.messages.map((message) => message.content.text);
  await client.close();
  return report;
}

const report = { modern: await modern(), legacy: await legacy() };
console.log(JSON.stringify(report));
