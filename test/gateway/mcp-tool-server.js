/**
 * A small MCP tool server built with the official SDK, for the gateway's
 * tests and bench: `echo` (answers its text), `fail` (a tool error,
 * `isError: true`) and `count` (a structured result with numbers written as
 * the server writes them). Run as a script it serves stdio; required, it
 * exports buildServer().
 */
'use strict';
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

/** `onCall(name)` (optional) is told of every tool call the server runs. */
function buildServer(onCall = () => undefined) {
  const server = new McpServer({ name: 'aer1-test-tools', version: '1.0.0' });
  server.registerTool('echo', { description: 'answers its text', inputSchema: { text: z.string() } }, async ({ text }) => (onCall('echo'), { content: [{ type: 'text', text: `echo: ${text}` }] }));
  server.registerTool('fail', { description: 'always fails', inputSchema: {} }, async () => (onCall('fail'), { content: [{ type: 'text', text: 'the upstream service is unavailable' }], isError: true }));
  server.registerTool('count', { description: 'counts to n', inputSchema: { n: z.number() } }, async ({ n }) => (onCall('count'), { content: [{ type: 'text', text: Array.from({ length: n }, (_, i) => String(i + 1)).join(' ') }] }));
  return server;
}

module.exports = { buildServer };

if (require.main === module) {
  buildServer()
    .connect(new StdioServerTransport())
    .catch((err) => {
      process.stderr.write(String(err) + '\n');
      process.exit(1);
    });
}
