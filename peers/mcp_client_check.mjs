// A third-party MCP client (the official TypeScript SDK, its `Client`) against
// Axon's MCP server: the same calls file and report as mcp_client_check.py.
//
//   node mcp_client_check.mjs [--calls FILE] stdio AXON_BINARY [ARGS...]
//   node mcp_client_check.mjs [--calls FILE] http URL
//
// The SDK (protocol 2025-11-25: initialize, then a session) validates every
// result's structuredContent against the tool's outputSchema with ajv and throws
// when it does not conform: such a call is reported as `rejected`. ajv's
// warnings (an unknown "format" in a schema) are reported as `warnings`.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const warnings = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => warnings.push(args.map(String).join(" "));
}

function substitute(value, saved) {
  if (typeof value === "string" && value.startsWith("${") && value.endsWith("}")) {
    const key = value.slice(2, -1);
    return key in saved ? saved[key] : value;
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, saved));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, saved)]));
  }
  return value;
}

const argv = process.argv.slice(2);
let calls = [{ tool: "echo", args: { from: "typescript" } }];
if (argv[0] === "--calls") {
  calls = JSON.parse(readFileSync(argv[1], "utf8"));
  argv.splice(0, 2);
}
const [mode, ...rest] = argv;
const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: rest[0], args: [...rest.slice(1), "mcp"], env: process.env, stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(rest[0]));

const client = new Client({ name: "axon-ts-check", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const saved = {};
const report = [];
const progress = [];
for (const call of calls) {
  const entry = { tool: call.tool };
  try {
    const result = await client.callTool(
      { name: call.tool, arguments: substitute(call.args ?? {}, saved) },
      undefined,
      { timeout: 60000, onprogress: (p) => progress.push(p) },
    );
    entry.result = result;
    for (const [key, field] of Object.entries(call.save ?? {})) {
      saved[key] = result.structuredContent?.[field];
    }
  } catch (e) {
    entry.rejected = String(e?.message ?? e);
  }
  report.push(entry);
}
const out = {
  protocol: transport.protocolVersion ?? null,
  tools: tools.map((t) => ({
    name: t.name,
    has_input_schema: !!t.inputSchema,
    has_output_schema: !!t.outputSchema,
    read_only: !!t.annotations?.readOnlyHint,
  })),
  calls: report,
  progress,
  warnings,
};
await client.close();
// A pipe takes big writes in pieces: exit only once all of it is out.
process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(0));
