/**
 * The OpenAPI contract (issue 12): /docs-json is complete enough to generate
 * a client from. TypeScript types are generated from the live document with
 * openapi-typescript, a small typed client (test/e2e/openapi-client) is
 * type-checked against them with the TypeScript compiler API, then run
 * against the real server; every answer must be a documented status whose
 * schema (ajv) it validates against.
 */
import Ajv, { ValidateFunction } from 'ajv';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { buildTimeline, commitmentFor, EIGHT_STEPS, eightStepPlan } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { vector } from '../helpers/corpus';

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  security?: unknown[];
  requestBody?: { content: Record<string, { schema?: Json }> };
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> } };

const ROOT = join(__dirname, '../..');
const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

function operations(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ method, path, op })));
}

/** Generate types with openapi-typescript (its CLI: the package is ESM only), then type-check the client with the compiler API. */
function generateAndTypeCheck(doc: Doc, dir: string): ts.Diagnostic[] {
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  execFileSync(process.execPath, [join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), join(dir, 'openapi.json'), '-o', join(dir, 'schema.ts')], { stdio: 'pipe' });
  copyFileSync(join(__dirname, 'openapi-client/client.ts.txt'), join(dir, 'client.ts'));
  copyFileSync(join(__dirname, 'openapi-client/scenario.ts.txt'), join(dir, 'scenario.ts'));
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    skipLibCheck: true,
  };
  const program = ts.createProgram([join(dir, 'scenario.ts')], options);
  return [...ts.getPreEmitDiagnostics(program)];
}

/** Transpile the type-checked client to CommonJS next to it and load the scenario. */
function loadScenario(dir: string): { run: (f: unknown) => Promise<{ op: string; status: number; body: unknown }[]> } {
  for (const name of ['client', 'scenario']) {
    const out = ts.transpileModule(readFileSync(join(dir, `${name}.ts`), 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
    writeFileSync(join(dir, `${name}.js`), out.outputText);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(join(dir, 'scenario.js')) as { run: (f: unknown) => Promise<{ op: string; status: number; body: unknown }[]> };
}

describe.each(DIALECTS)('OpenAPI contract on %s', (dialect) => {
  let t: TestApp;
  let base: string;
  let doc: Doc;
  let dir: string;
  beforeAll(async () => {
    t = await startApp(dialect);
    await new Promise<void>((resolve) => t.app.getHttpServer().listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    doc = (await t.http.get('/docs-json')).body as Doc;
    dir = mkdtempSync(join(tmpdir(), 'aer1-openapi-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it('names every operation readably, documents bodies, answers and errors with named schemas, and has no JWT bearer format', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThanOrEqual(41);
    expect(Object.keys(doc.components.schemas).length).toBeGreaterThan(40);
    expect(doc.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(JSON.stringify(doc)).not.toContain('bearerFormat');
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const problems: string[] = [];
    const refOk = (s: unknown): boolean => {
      const text = JSON.stringify(s ?? null);
      return [...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].every((m) => m[1] in doc.components.schemas);
    };
    for (const { method, path, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!op.operationId || !/^[a-z][A-Za-z]+$/.test(op.operationId) || /Controller/.test(op.operationId)) problems.push(`${where}: operationId ${op.operationId}`);
      for (const [status, r] of Object.entries(op.responses)) {
        if (status === '204') continue;
        // A success may be NDJSON (the timeline export), JSON Lines (evidence packs), Server-Sent Events (the live event stream) or a signed note
        // (checkpoints: text/plain, exactly as signed) or an RFC 3161 token (DER, application/timestamp-reply), each documented
        // (or a PDF of a coverage report, or an SVG badge, or tlog-tiles bytes) with its own media type and schema; /metrics answers the Prometheus text format.
        const text = path === '/metrics' && status === '200' ? r.content?.['text/plain']?.schema : undefined;
        const json = r.content?.['application/json']?.schema ?? (status.startsWith('2') ? (r.content?.['application/x-ndjson'] ?? r.content?.['application/jsonl'] ?? r.content?.['text/event-stream'] ?? r.content?.['text/plain; charset=utf-8'] ?? r.content?.['application/timestamp-reply'] ?? r.content?.['application/pdf'] ?? r.content?.['image/svg+xml'] ?? r.content?.['application/octet-stream'])?.schema ?? text : undefined);
        if (!json) problems.push(`${where} ${status}: no JSON schema`);
        else if (!refOk(json)) problems.push(`${where} ${status}: dangling $ref`);
        // Errors answer the Error body; only a verifier's 422 (its full answer, verdict not valid), the ledger verifier's 409 and /health's 503 differ.
        // The ledger verifier answers its full report with 409 when anything fails.
        // A verifier's 410 (issue 29: the content was erased) is its full answer too: verdict erased / partly_erased, never valid.
        const verifierAnswer = ((status === '422' || status === '410') && op.operationId?.startsWith('verify')) || (status === '503' && path === '/health') || (status === '409' && op.operationId === 'verifyLedger');
        if (Number(status) >= 400 && !verifierAnswer && JSON.stringify(json) !== JSON.stringify({ $ref: '#/components/schemas/Error' })) problems.push(`${where} ${status}: not the Error schema`);
      }
      if (!Object.keys(op.responses).some((s) => s.startsWith('2'))) problems.push(`${where}: no success answer`);
      if (op.responses['201'] && !(op.responses['201'] as { headers?: Record<string, unknown> }).headers?.Location) problems.push(`${where}: 201 without Location`);
      const write = method === 'post' || method === 'put';
      if (write) {
        if (!op.requestBody || Object.values(op.requestBody.content).some((c) => !c.schema)) problems.push(`${where}: request body undocumented`);
        for (const s of ['400', '401', '403', '413', '415', '422']) if (!op.responses[s]) problems.push(`${where}: ${s} undocumented`);
        if (!op.security?.length) problems.push(`${where}: no security`);
      } else if (method === 'get' && !op.security?.length && path !== '/health' && path !== '/' && !op.responses['429']) {
        problems.push(`${where}: public read without 429`);
      }
    }
    // The write endpoints the issue found undocumented.
    for (const [path, method] of [['/api/receipts/batch', 'post'], ['/api/keys', 'post'], ['/api/plans/{plan_id}/amendments', 'post']] as const) {
      expect(doc.paths[path][method].requestBody).toBeDefined();
    }
    expect(Object.keys(doc.paths['/api/jobs/{job_id}/timeline'].put.requestBody!.content).sort()).toEqual(['application/json', 'application/x-ndjson']);
    expect(Object.keys(doc.paths['/api/receipts/batch'].post.requestBody!.content)).toEqual(['application/x-ndjson']);
    expect(doc.paths['/api/receipt/{id}/verify'].get).toEqual(expect.objectContaining({ deprecated: true, operationId: 'verifyReceiptDeprecated' }));
    const errorCodes = (doc.components.schemas.Error.properties as Record<string, { enum: string[] }>).error.enum;
    // The picture, PDF and badge endpoints (issue 16).
    expect(Object.keys(doc.paths['/coverage/{report_id}.pdf'].get.responses['200'].content!)).toEqual(['application/pdf']);
    for (const kind of ['receipt/{id}', 'job/{job_id}', 'workflow/{workflow_id}']) {
      const op = doc.paths[`/badge/${kind}.svg`].get;
      expect(Object.keys(op.responses['200'].content!)).toEqual(['image/svg+xml']);
      expect(Object.keys(op.responses).sort()).toEqual(['200', '404', '429']);
    }
    expect(errorCodes).toEqual(expect.arrayContaining(['verification_failed', 'missing_key', 'forbidden_role', 'body_too_large', 'rate_limited', 'quota_exceeded', 'timeline_exists', 'invalid_plan']));
    // The live feed is documented as an event stream of StreamedEvent; the webhook endpoints need a key.
    expect(doc.paths['/api/ledger/events/stream'].get.responses['200'].content?.['text/event-stream']?.schema).toEqual({ $ref: '#/components/schemas/StreamedEvent' });
    expect(doc.paths['/api/webhooks'].post.requestBody!.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateWebhook' });
    expect(problems).toEqual([]);
  });

  it('generates TypeScript types (openapi-typescript), type-checks a typed client, and every live answer validates against its schema', async () => {
    const diagnostics = generateAndTypeCheck(doc, dir);
    expect(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
    const { run } = loadScenario(dir);

    const wf = vector('workflow-valid-3') as { workflow: Json; step_receipts: Json[] };
    const timeline = buildTimeline('job-contract', EIGHT_STEPS);
    const ndjsonTimeline = buildTimeline('job-contract-ndjson', EIGHT_STEPS);
    const answers = await run({
      base,
      publicBase: 'https://ledger.test',
      keys: t.keys,
      receipt: vector('receipt-core-valid'),
      tampered: vector('receipt-tampered-bytes'),
      stepReceipts: wf.step_receipts,
      workflow: wf.workflow,
      jobJson: 'job-contract',
      timeline,
      jobNdjson: 'job-contract-ndjson',
      ndjson: ndjsonTimeline.map((e) => JSON.stringify(e)).join('\n') + '\n',
      commitment: commitmentFor(timeline),
      historical: vector('chain-historical-06'),
      jobHistorical: (vector('chain-historical-06') as { job_id: string }[])[0].job_id,
      open: buildTimeline('job-contract-open', EIGHT_STEPS).slice(0, 2),
      jobOpen: 'job-contract-open',
      draftWorkflow: vector('workflow-draft-example'),
      plan: eightStepPlan('job-contract'),
    });
    expect(answers.length).toBeGreaterThanOrEqual(35);

    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const cache = new Map<string, ValidateFunction>();
    const byId = new Map(operations(doc).map((o) => [o.op.operationId!, o.op]));
    const failures: string[] = [];
    for (const a of answers) {
      const op = byId.get(a.op)!;
      const schema = op.responses[String(a.status)]?.content?.['application/json']?.schema;
      if (!schema) {
        failures.push(`${a.op} answered ${a.status}, which it does not document`);
        continue;
      }
      const key = `${a.op}:${a.status}`;
      if (!cache.has(key)) cache.set(key, ajv.compile({ ...schema, components: doc.components }));
      const validate = cache.get(key)!;
      if (!validate(a.body)) failures.push(`${key}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(failures).toEqual([]);
    // The validation has teeth: a body missing members, or an error code not in the enum, is refused.
    const recorded = ajv.compile({ $ref: '#/components/schemas/ReceiptRecorded', components: doc.components });
    expect(recorded({ outcome: 'created' })).toBe(false);
    const error = ajv.compile({ $ref: '#/components/schemas/Error', components: doc.components });
    expect(error({ error: 'no_such_code', message: 'x' })).toBe(false);
    expect(error({ error: 'missing_key', message: 'x' })).toBe(true);
    // The operations the issue names were exercised, errors included.
    const seen = new Set(answers.map((a) => `${a.op}:${a.status}`));
    for (const k of ['recordReceipt:201', 'recordReceipt:200', 'recordReceipt:422', 'recordReceipt:400', 'recordReceipt:401', 'recordReceipt:403', 'verifyReceipt:200', 'getReceipt:200', 'getReceipt:404', 'listReceipts:200', 'importTimeline:201', 'recordCommitment:201', 'verifyJob:200', 'verifyJob:422', 'appendEntries:201', 'getJobEndpoint:409', 'verifyWorkflow:422', 'getPlanVersion:200', 'registerPlan:201', 'registerPlan:422', 'amendPlan:201', 'issueCoverageReport:201', 'issueCoverageReport:400', 'getCoverageReport:200', 'listJobs:200', 'listWorkflows:200', 'findPlans:200', 'findPlans:403', 'listCoverageReports:200', 'listVerificationBatches:200', 'verifyLedger:200']) {
      expect(seen).toContain(k);
    }
  }, 120_000);

  it('a client type-check fails when the client reads a member the contract does not have', () => {
    // The proof has teeth: the same client reading an undocumented member does not compile.
    const bad = readFileSync(join(__dirname, 'openapi-client/scenario.ts.txt'), 'utf8').replace('const receiptId: string = rec.body.id;', 'const receiptId: string = rec.body.no_such_member;');
    writeFileSync(join(dir, 'scenario.ts'), bad);
    const program = ts.createProgram([join(dir, 'scenario.ts')], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, lib: ['lib.es2022.d.ts'], types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')], skipLibCheck: true });
    const messages = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(messages.some((m) => m.includes('no_such_member'))).toBe(true);
  });
});
