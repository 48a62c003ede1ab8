import { cli, TmpDir } from './helpers';

describe('aer1 refuses ambiguous JSON (a member name twice in one object)', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());
  const receipt = '{"id":"38b2097d-75ca-5ae7-8135-da763ecf0256","receipt_schema_version":"0.3","created_at":"2026-09-23T23:45:20.760Z","tool":{"name":"live_price","version":"4.0.0","scope":"public"},"provenance_class":"EXECUTED BY LEDGER","canonical_bytes":"eyJwcmljZSI6IjY0MjEwLjU1Iiwic3ltYm9sIjoiQlRDIn0=","output_hash":"sha256:3f8dfebc3bdf8445321ba564aa800a906b41852559493ea4b8af557b5ec85581","verification_status":"verified"}';

  it('verifies the plain receipt', async () => {
    expect((await cli(['verify', tmp.write('ok.json', receipt)])).code).toBe(0);
  });

  it('exits 2 naming the member for a whole document', async () => {
    const dup = receipt.replace('"verification_status"', '"canonical_bytes":"dGFtcGVyZWQ=","verification_status"');
    const r = await cli(['verify', tmp.write('dup.json', dup)]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/"canonical_bytes" appears twice/);
  });

  it('answers duplicate_member for such a line in a batch and goes on', async () => {
    const dup = receipt.replace('"verification_status"', '"id":"00000000-0000-0000-0000-000000000000","verification_status"');
    const file = tmp.write('batch.ndjson', `{"id":"a","kind":"receipt","input":${receipt}}\n{"id":"b","kind":"receipt","input":${dup}}\n`);
    const r = await cli(['verify', '--batch', '--json', file]);
    expect(r.lines.map((l) => JSON.parse(l) as { verdict: string; reasons: string[] })).toEqual([
      { line: 1, id: 'a', kind: 'receipt', verdict: 'valid', reasons: [] },
      { line: 2, id: null, kind: null, verdict: 'invalid', reasons: ['duplicate_member'] },
    ]);
    expect(r.code).toBe(1);
  });
});
