/**
 * Child process of the pack figure (bench/pack.ts), run as
 *   node pack-child.js seed DATABASE_URL ENTRIES   (a job of ENTRIES appended entries, each its own event, and a checkpoint)
 *   node pack-child.js stream DATABASE_URL         (write the job's evidence pack to nowhere, print {bytes, lines})
 * so that `stream` is measured alone: its peak RSS is the pack's cost on top of the app.
 * LEDGER_SIGNING_KEY_FILE comes from the parent (PostgreSQL: no embedded key).
 */
import { ChainEntry, entryDigest, sha256Hex, ZERO_DIGEST } from '../src/core/aer1';
import { createApp } from '../src/app.factory';
import type { Principal } from '../src/auth/api-keys.service';
import { SYSTEM } from '../src/core/ledger/event-hash';
import { DatabaseService } from '../src/database/database.service';
import { EvidenceService } from '../src/evidence/evidence.service';
import { LedgerService } from '../src/ledger/ledger.service';
import { streams } from '../src/ledger/streams';
import { CheckpointSigner } from '../src/log/checkpoint-signer';

export const PACK_JOB = 'bench-pack-job';

async function main(): Promise<void> {
  const [mode, file, n] = process.argv.slice(2);
  const app = await createApp({ ...process.env, DATABASE_URL: file, LOG_LEVEL: process.env.PACK_LOG ?? 'silent', CHECKPOINT_INTERVAL_MS: '3600000', PUBLIC_BASE_URL: 'http://127.0.0.1:1' });
  await app.init();
  if (mode === 'seed') {
    const total = Number(n);
    const db = app.get(DatabaseService);
    const ledger = app.get(LedgerService);
    const stream = streams.timeline(PACK_JOB);
    let prev = ZERO_DIGEST;
    for (let from = 1; from <= total; from += 1000) {
      await db.write(async (tx) => {
        const events = [];
        for (let seq = from; seq < Math.min(from + 1000, total + 1); seq++) {
          const bytes = Buffer.from(JSON.stringify({ job: PACK_JOB, seq }), 'utf8');
          const e: ChainEntry = { seq, job_id: PACK_JOB, id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`, tool: `tool_${seq % 50}`, provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: bytes.toString('base64'), prev_digest: prev };
          const d = entryDigest(e) ?? sha256Hex(JSON.stringify(e));
          prev = d;
          events.push({ type: 'TimelineEntryAppended' as const, data: { job_id: PACK_JOB, seq, raw: JSON.stringify(e), entry_digest: d, receipt_id: e.id, tool: e.tool, provenance_class: e.provenance_class, close: false } });
        }
        await ledger.append(tx, stream, await ledger.streamVersion(tx, stream), events, SYSTEM);
      });
    }
    // The bootstrap tick may be running (it is shared): tick again once it is done.
    await app.get(CheckpointSigner).tick();
    await app.get(CheckpointSigner).tick();
  } else {
    const { chunks } = await app.get(EvidenceService).open('job', PACK_JOB, { role: 'auditor', key_id: 'bench', name: 'bench' } as unknown as Principal);
    let bytes = 0;
    let lines = 0;
    for await (const c of chunks) {
      bytes += Buffer.byteLength(c);
      for (let i = c.indexOf('\n'); i >= 0; i = c.indexOf('\n', i + 1)) lines++;
    }
    process.stdout.write(JSON.stringify({ bytes, lines }) + '\n');
  }
  await app.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
