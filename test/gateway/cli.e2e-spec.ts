/**
 * The built `aer1 gateway` (bin/aer1, what `npm run gateway --` runs) as an
 * MCP client starts it: the SDK's stdio client spawns the gateway, which
 * spawns the tool server; ledger and key from AER1_SERVER and AER1_KEY.
 */
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { cli } from '../cli/helpers';
import { startApp, TestApp } from '../helpers/app';
import { TOOL_SERVER_SCRIPT } from './harness';

const AER1 = join(resolve(__dirname, '../..'), 'bin', 'aer1');

describe('aer1 gateway as a process', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('sqlite');
    await t.app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await t.close();
  });

  it('an MCP client starts it over stdio; the call is recorded with the key from AER1_KEY', async () => {
    const key = (await t.app.get(ApiKeysService).create('cli-gateway', 'producer', { gateway: true, systems: [] })).key;
    const server = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [AER1, 'gateway', '--job', 'cli-job', '--stdio', '--', process.execPath, TOOL_SERVER_SCRIPT],
      env: { PATH: process.env.PATH ?? '', AER1_SERVER: server, AER1_KEY: key },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'cli-agent', version: '1.0.0' });
    await client.connect(transport);
    const r = (await client.callTool({ name: 'echo', arguments: { text: 'from a process' } })) as unknown as { content: { text: string }[]; _receipt: { id: string; provenance_class: string; status: string } };
    expect(r.content[0].text).toBe('echo: from a process');
    expect(r._receipt).toMatchObject({ provenance_class: 'OBSERVED VIA GATEWAY', status: 'ok' });
    await client.close();
    // The agent closed the gateway's stdin: the session ended and the gateway closed the job before it exited.
    const tl = await t.http.get('/api/jobs/cli-job/timeline');
    expect(tl.body.entries.map((e: { id: string; tool: string }) => [e.id === r._receipt.id, e.tool])).toEqual([
      [true, 'echo'],
      [false, 'aer1.job.close'],
    ]);
    expect(tl.body.head.closed).toBe(true);
  });

  it('usage errors exit 2 with one line', async () => {
    const none = await cli(['gateway']);
    expect([none.code, none.err]).toEqual([2, 'aer1: give either --upstream URL or --stdio -- COMMAND ARGS...\n']);
    const both = await cli(['gateway', '--upstream', 'http://127.0.0.1:1/mcp', '--stdio', '--', 'x']);
    expect(both.code).toBe(2);
    const bad = await cli(['gateway', '--upstream', 'http://127.0.0.1:1/mcp', '--on-ledger-down', 'drop']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^aer1: option '--on-ledger-down <mode>' argument 'drop' is invalid/);
  });
});
