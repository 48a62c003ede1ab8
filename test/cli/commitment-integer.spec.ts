/**
 * Reading 9 in the CLI: a commitment file whose `entry_count` is written
 * `8.0` or `8e0` is invalid_commitment (honest answers issue: it bound the
 * timeline as 8).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, TmpDir } from './helpers';

const example = (name: string): string => readFileSync(join(__dirname, '../../examples', name), 'utf8');

describe('aer1: a commitment entry_count must be written as a JSON integer', () => {
  const tmp = new TmpDir();
  const timeline = tmp.write('timeline.json', example('timeline-eight.json'));
  const good = example('commitment-eight.json');
  const bad = good.replace('"entry_count": 8', '"entry_count": 8.0');
  afterAll(() => tmp.cleanup());

  it('verify --commitment: 8 binds, 8.0 is invalid_commitment (was: valid)', async () => {
    const ok = await cli(['verify', '--kind', 'chain', '--json', '--commitment', tmp.write('good.json', good), timeline]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ kind: 'commitment', verdict: 'valid', binding: true });
    const r = await cli(['verify', '--kind', 'chain', '--json', '--commitment', tmp.write('bad.json', bad), timeline]);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j).toMatchObject({ kind: 'commitment', verdict: 'invalid', binding: false, reasons: ['invalid_commitment'] });
    expect(j.commitment.entry_count).toBe(8);
    expect(j.checks).toContainEqual({ name: 'commitment.format', ok: false, detail: 'entry_count must be written as a JSON integer (no fraction, no exponent), got 8.0' });
  });

  it('verify --commitment with the commitment in an envelope, and a {timeline, commitment} document', async () => {
    const envelope = tmp.write('envelope.json', `{"witness": "w.example", "commitment": ${good.replace('"entry_count": 8', '"entry_count": 8e0')}}`);
    const r = await cli(['verify', '--kind', 'chain', '--json', '--commitment', envelope, timeline]);
    expect([r.code, JSON.parse(r.out).reasons]).toEqual([1, ['invalid_commitment']]);
    const doc = tmp.write('doc.json', `{"timeline": ${example('timeline-eight.json')}, "commitment": ${bad}}`);
    const d = await cli(['verify', '--json', doc]);
    expect([d.code, JSON.parse(d.out).kind, JSON.parse(d.out).reasons]).toEqual([1, 'commitment', ['invalid_commitment']]);
    const docOk = tmp.write('doc-ok.json', `{"timeline": ${example('timeline-eight.json')}, "commitment": ${good}}`);
    expect((await cli(['verify', '--json', docOk])).code).toBe(0);
  });

  it('coverage --commitment: 8.0 is a malformed, non-binding commitment (was: binding)', async () => {
    const plan = join(__dirname, '../../examples/coverage/plan.json');
    const covTimeline = join(__dirname, '../../examples/coverage/timeline.json');
    const receipts = join(__dirname, '../../examples/coverage/receipts.ndjson');
    const commitment = example('coverage/commitment.json');
    const run = async (text: string) => JSON.parse((await cli(['coverage', '--plan', plan, '--timeline', covTimeline, '--receipts', receipts, '--json', '--commitment', tmp.write('c.json', text)])).out);
    expect((await run(commitment)).report.integrity.commitment.state).toBe('binding');
    const bad7 = commitment.replace(/"entry_count": (\d+)/, '"entry_count": $1.0');
    expect(bad7).not.toBe(commitment);
    const c = (await run(bad7)).report.integrity.commitment;
    expect(c).toMatchObject({ state: 'non_binding', reasons: ['invalid_commitment'], truncation: 'not_excluded' });
    expect(c.statement).toMatch(/malformed \(reading 9\)/);
  });
});
