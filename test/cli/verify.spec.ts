/**
 * `aer1 verify` on single documents: verdict lines, exit codes, the readable
 * report (checks, recomputed values, provenance, limits) and --json.
 */
import { cli, TmpDir, vector } from './helpers';

describe('aer1 verify (single documents)', () => {
  const tmp = new TmpDir();
  afterAll(() => tmp.cleanup());

  const file = (id: string): string => tmp.write(`${id}.json`, vector(id).input as object);

  it('reports a valid core receipt with exit 0, every check and the provenance beside the fields', async () => {
    const r = await cli(['verify', file('receipt-core-valid')]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.lines).toContain('Verdict: VALID');
    expect(r.lines).toContain('Reasons: none');
    expect(r.lines).toContain('Kind: receipt (core form)');
    expect(r.out).toMatch(/^ {2}\u2713 output_commitment +recomputed sha256:[0-9a-f]{64}$/m);
    expect(r.out).toMatch(/^ {2}output_hash +sha256:[0-9a-f]{64}$/m);
    // provenance beside each recorded field, as recorded
    const idLine = r.lines.find((l) => /^ {2}id {2,}/.test(l));
    expect(idLine).toMatch(/\[EXECUTED BY LEDGER\]$/);
    expect(r.lines).toContain('What this does not prove');
    expect(r.out).toContain('S6 step 5');
  });

  it('shows ✗ for the failing check and exits 1 for a tampered receipt', async () => {
    const r = await cli(['verify', file('receipt-tampered-bytes')]);
    expect(r.code).toBe(1);
    expect(r.lines).toContain('Verdict: INVALID');
    expect(r.lines).toContain('Reasons: output_hash_mismatch');
    expect(r.out).toMatch(/^ {2}\u2717 output_commitment +declared sha256:/m);
  });

  it('shows – for a check that could not be evaluated', async () => {
    const r = await cli(['verify', file('receipt-unpadded-base64')]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^ {2}\u2013 output_commitment +not confirmed/m);
    expect(r.out).toContain('(not computable: canonical_bytes did not decode)');
  });

  it('never upgrades an unknown provenance class', async () => {
    const r = await cli(['verify', file('receipt-unknown-provenance')]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('[unrecognised provenance class');
    expect(r.out).toContain('not one of the S5 classes: attests nothing');
  });

  it('keeps a transport receipt of a failed call valid and shows its status as sent', async () => {
    const r = await cli(['verify', file('transport-provider-failure')]);
    expect(r.code).toBe(0);
    expect(r.lines).toContain('Kind: receipt (transport form)');
    expect(r.out).toMatch(/^ {2}status +provider_unavailable +\[/m);
  });

  it('prints the result object with --json', async () => {
    const r = await cli(['verify', '--json', file('receipt-bad-id')]);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.kind).toBe('receipt');
    expect(j.verdict).toBe('invalid');
    expect(j.reasons).toContain('invalid_id');
    expect(Array.isArray(j.checks)).toBe(true);
    expect(j.provenance.class).toBe('EXECUTED BY LEDGER');
    expect(j.limits.length).toBeGreaterThan(0);
  });

  it('reports the draft Section 8 example: Merkle root confirmed, verdict incomplete', async () => {
    const r = await cli(['verify', file('workflow-draft-example')]);
    expect(r.code).toBe(1);
    expect(r.lines).toContain('Verdict: INCOMPLETE');
    expect(r.lines).toContain('Reasons: step_receipts_unavailable');
    expect(r.lines).toContain('  \u2713 Merkle root confirmed: it recomputes from the 5 step receipt ids');
    expect(r.out).toMatch(/^ {2}declared +7c4817ca249edfeae259b98abf63ed38a31d9dbeebf5ee23139410a7a7f63b37$/m);
    expect(r.out).toMatch(/^ {2}computed +7c4817ca249edfeae259b98abf63ed38a31d9dbeebf5ee23139410a7a7f63b37$/m);
    expect(r.out).toContain('receipt not supplied');

    const j = JSON.parse((await cli(['verify', '--json', '--kind', 'workflow', file('workflow-draft-example')])).out);
    expect(j.verdict).toBe('incomplete');
    expect(j.merkle.confirmed).toBe(true);
    expect(j.merkle.computed).toBe('7c4817ca249edfeae259b98abf63ed38a31d9dbeebf5ee23139410a7a7f63b37');
    expect(j.output_hash_confirmed).toBe(false);
  });

  it('reports a valid workflow with its step receipts and per-step provenance', async () => {
    const r = await cli(['verify', file('workflow-valid-3')]);
    expect(r.code).toBe(0);
    expect(r.lines).toContain('Verdict: VALID');
    expect(r.out).toMatch(/receipt verified {2}\[/);
  });

  it('reports a chain: entry digests, final digest, entry count, provenance counts', async () => {
    const r = await cli(['verify', file('chain-valid-4')]);
    expect(r.code).toBe(0);
    expect(r.lines).toContain('Verdict: VALID');
    expect(r.out).toMatch(/^ {2}entry count +4$/m);
    expect(r.out).toMatch(/^ {2}final entry digest +ec902ae19c58a225ffaef0adb272fb791f7d23028ed4fdaee3d9ef09fed90984$/m);
    expect(r.out).toMatch(/^ {2}entry 1 {2}seq 1 {2}170a8013413de7e54aca747c60682c81c3ca02cf6b31a8d0661255e289b74021$/m);
    expect(r.out).toMatch(/^ {2}EXECUTED BY LEDGER +4 +The recording system ran the tool/m);
    expect(r.out).toContain('not truncation-proof');
  });

  it('reports a -06 chain as HISTORICAL with exit 1', async () => {
    const r = await cli(['verify', file('chain-historical-06')]);
    expect(r.code).toBe(1);
    expect(r.lines).toContain('Verdict: HISTORICAL');
    expect(r.out).toMatch(/^ {2}construction +-06 \(historical, S7\.4\)$/m);
  });

  it('reports a commitment document, binding or not', async () => {
    const ok = await cli(['verify', file('commitment-binding')]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('Binding: YES');
    const bad = await cli(['verify', file('commitment-truncation')]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('Binding: NO');
    expect(bad.lines).toContain('Reasons: commitment_entry_count_mismatch, commitment_final_digest_mismatch');
  });

  it('honours --kind over the inferred kind', async () => {
    // A chain entry array verified as a receipt is not an object.
    const r = await cli(['verify', '--kind', 'receipt', '--json', file('chain-valid-1')]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'receipt', verdict: 'invalid', reasons: ['not_object'] });
  });

  it('reads the document from stdin with -', async () => {
    const doc = JSON.stringify(vector('receipt-core-valid').input);
    const r = await cli(['verify', '-'], { stdin: doc });
    expect(r.code).toBe(0);
    expect(r.lines[0]).toBe('AER-1 verification of stdin');
    expect(r.lines).toContain('Verdict: VALID');
  });

  it('escapes control characters from the input instead of printing them', async () => {
    const input = { ...(vector('receipt-core-valid').input as object), tool: { name: 'x\u001b[2J\u202ey', version: '1', scope: 's' } };
    const r = await cli(['verify', tmp.write('escape.json', input)]);
    expect(r.out).not.toContain('\u001b');
    expect(r.out).not.toContain('\u202e');
    expect(r.out).toContain('x\\u001b[2J\\u202ey');
  });

  describe('--commitment', () => {
    const binding = vector('commitment-binding').input as { timeline: unknown[]; commitment: Record<string, unknown> };
    const truncated = vector('commitment-truncation').input as { timeline: unknown[]; commitment: Record<string, unknown> };

    it('binds an array timeline', async () => {
      const tl = tmp.write('bind-tl.json', binding.timeline);
      const c = tmp.write('bind-c.json', binding.commitment);
      const r = await cli(['verify', '--kind', 'chain', '--commitment', c, tl]);
      expect(r.code).toBe(0);
      expect(r.lines).toContain('Verdict: VALID');
      expect(r.out).toContain('Binding: YES');
      const j = JSON.parse((await cli(['verify', '--json', '--commitment', c, tl])).out);
      expect(j).toMatchObject({ kind: 'commitment', binding: true, verdict: 'valid' });
    });

    it('binds a streamed NDJSON timeline, and carries an envelope’s witness metadata', async () => {
      const tl = tmp.write('bind-tl.ndjson', binding.timeline.map((e) => JSON.stringify(e)).join('\n') + '\n');
      const c = tmp.write('bind-env.json', { commitment: binding.commitment, witness: 'example witness', retrieved_from: 'https://w.example/c' });
      const r = await cli(['verify', '--kind', 'chain', '--json', '--commitment', c, tl]);
      expect(r.code).toBe(0);
      const j = JSON.parse(r.out);
      expect(j).toMatchObject({ kind: 'commitment', binding: true, witness: { witness: 'example witness', retrieved_from: 'https://w.example/c' } });
      expect(j.input.format).toBe('ndjson');
    });

    it('does not bind a truncated timeline', async () => {
      const tl = tmp.write('trunc-tl.json', truncated.timeline);
      const c = tmp.write('trunc-c.json', truncated.commitment);
      const r = await cli(['verify', '--commitment', c, tl]);
      expect(r.code).toBe(1);
      expect(r.out).toContain('Binding: NO');
      expect(r.lines).toContain('Reasons: commitment_entry_count_mismatch, commitment_final_digest_mismatch');
    });

    it('is a usage error with a non-chain kind or document', async () => {
      const c = tmp.write('c-only.json', binding.commitment);
      const a = await cli(['verify', '--kind', 'receipt', '--commitment', c, file('receipt-core-valid')]);
      expect(a.code).toBe(2);
      expect(a.err).toMatch(/^aer1: --commitment .*\n$/);
      const b = await cli(['verify', '--commitment', c, file('receipt-core-valid')]);
      expect(b.code).toBe(2);
      expect(b.err).toMatch(/^aer1: --commitment checks a timeline, but .* is a receipt\n$/);
    });

    it('judges every --commitment given: one that proves truncation is not hidden by one that binds, in either order (integrity issue)', async () => {
      const six = truncated.timeline;
      const tl = tmp.write('six-tl.json', six);
      const ndjson = tmp.write('six-tl.ndjson', six.map((e) => JSON.stringify(e)).join('\n') + '\n');
      const witness = tmp.write('witness-8.json', truncated.commitment);
      const digest = JSON.parse((await cli(['verify', '--json', '--kind', 'chain', tl])).out).final_entry_digest as string;
      const forged = tmp.write('forged-6.json', { ...truncated.commitment, final_entry_digest: digest, entry_count: six.length });
      const alone = await cli(['verify', '--commitment', forged, tl]);
      expect(alone.code).toBe(0);
      for (const [a, b] of [[witness, forged], [forged, witness]]) {
        for (const file of [tl, ndjson]) {
          const r = await cli(['verify', '--kind', 'chain', '--commitment', a, '--commitment', b, file]);
          expect(r.code).toBe(1);
          expect(r.lines).toContain('Verdict: INVALID');
          expect(r.out).toContain('Binding: NO');
          expect(r.out).toMatch(/^Endpoint commitments judged together \(2\): truncation_detected; truncation NOT excluded$/m);
          const j = JSON.parse((await cli(['verify', '--kind', 'chain', '--json', '--commitment', a, '--commitment', b, file])).out);
          expect(j).toMatchObject({ kind: 'commitment', verdict: 'invalid', binding: false, reasons: ['commitment_entry_count_mismatch', 'commitment_final_digest_mismatch'] });
          expect(j.commitments).toMatchObject({ status: 'truncation_detected', truncation_excluded: false, findings: [{ code: 'truncation_detected', file: witness }] });
          expect(j.commitments.each.map((c: { file: string; outcome: string }) => [c.file, c.outcome])).toEqual([a, b].map((f) => [f, f === witness ? 'truncation_detected' : 'binding']));
        }
      }
    });

    it('checks an earlier checkpoint against that entry of the chain, streamed or not', async () => {
      const eight = binding.timeline;
      const tl = tmp.write('bind8.json', eight);
      const ndjson = tmp.write('bind8.ndjson', eight.map((e) => JSON.stringify(e)).join('\n') + '\n');
      const digestOf = async (entries: unknown[], name: string): Promise<string> => JSON.parse((await cli(['verify', '--json', '--kind', 'chain', tmp.write(name, entries)])).out).final_entry_digest as string;
      const at6 = (digest: string, name: string): string => tmp.write(name, { ...binding.commitment, final_entry_digest: digest, entry_count: 6 });
      const consistent = at6(await digestOf(eight.slice(0, 6), 'first6.json'), 'at6-ok.json');
      const rewritten = at6(await digestOf(truncated.timeline, 'rebuilt6.json'), 'at6-bad.json'); // entry 6 rebuilt and re-closed
      const whole = tmp.write('whole.json', binding.commitment);
      for (const file of [tl, ndjson]) {
        const ok = await cli(['verify', '--kind', 'chain', '--json', '--commitment', whole, '--commitment', consistent, file]);
        expect(ok.code).toBe(0);
        expect(JSON.parse(ok.out).commitments).toMatchObject({ status: 'binding', truncation_excluded: true, findings: [], each: [{ outcome: 'binding' }, { outcome: 'earlier_checkpoint' }] });
        const bad = await cli(['verify', '--kind', 'chain', '--json', '--commitment', whole, '--commitment', rewritten, file]);
        expect(bad.code).toBe(1);
        expect(JSON.parse(bad.out).commitments).toMatchObject({ status: 'entry_substituted', truncation_excluded: false, findings: [{ code: 'entry_substituted', file: rewritten }] });
      }
    });

    it('reports an unreadable commitment file with exit 2', async () => {
      const r = await cli(['verify', '--commitment', tmp.path('nope.json'), file('chain-valid-4')]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^aer1: cannot read .*nope\.json: ENOENT/);
    });
  });
});
