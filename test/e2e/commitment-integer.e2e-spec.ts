/**
 * Reading 9 on the ledger: a commitment's `entry_count` must be written as a
 * JSON integer (honest answers issue: `8.0` and `8e0` were recorded, binding,
 * as 8).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIALECTS, startApp, TestApp } from '../helpers/app';

const example = (name: string): string => readFileSync(join(__dirname, '../../examples', name), 'utf8');

describe.each(DIALECTS)('commitment entry_count written as a JSON integer (%s)', (dialect) => {
  let t: TestApp;
  const send = (method: 'post' | 'put', path: string, body: string) => t.http[method](path).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(body);
  const head = async () => (await t.http.get('/api/ledger/head')).body;

  beforeAll(async () => {
    t = await startApp(dialect);
    expect((await send('put', '/api/jobs/job-eight/timeline', example('timeline-eight.json'))).status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(['8.0', '8e0', '80E-1'])('refuses entry_count %s with 422 invalid_commitment, recording nothing (was: 201, binding)', async (written) => {
    const before = await head();
    const text = example('commitment-eight.json').replace('"entry_count": 8', `"entry_count": ${written}`);
    const r = await send('post', '/api/jobs/job-eight/commitments', text);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ error: 'invalid_commitment', reasons: ['invalid_commitment'], problems: [`entry_count must be written as a JSON integer (no fraction, no exponent), got ${written}`] });
    expect(await head()).toEqual(before);
  });

  it('records the same commitment written with an integer, binding', async () => {
    const r = await send('post', '/api/jobs/job-eight/commitments', example('commitment-eight.json'));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ binding: true, reasons: [] });
  });
});
