/**
 * Fixtures for the erasure suites (issue 29): a payment job whose tool
 * outputs and outcome observation hold a distinctive personal string, and
 * the byte sequences that must never be served (nor stay on disk) once it
 * is erased: the string, its base64 at every alignment, the entries'
 * canonical bytes in base64 and the output hashes.
 */
import { ChainEntry, entryDigest, sha256Hex, ZERO_DIGEST } from '../../src/core/aer1';
import { commitmentFor, receiptFor, uuidFor } from '../coverage/fixtures';
import { outcomeFor, paymentPlan } from '../outcomes/fixtures';
import type { TestApp } from '../helpers/app';

/** The personal data of one job's customer: distinctive enough that no other text holds it by chance. */
export function personOf(job: string): string {
  return `Zelda Quintavalle-Okonkwo ${job} IBAN GB94BARC10201530093459`;
}

/** One job: the two payment steps, each tool output naming the customer. */
export function personalTimeline(job: string): ChainEntry[] {
  const out: ChainEntry[] = [];
  let prev = ZERO_DIGEST;
  ['fetch_customer', 'send_payment'].forEach((tool, i) => {
    const seq = i + 1;
    const bytes = Buffer.from(JSON.stringify({ customer: personOf(job), step: seq, tool }), 'utf8');
    const e: ChainEntry = { seq, job_id: job, id: uuidFor(`${job}/${seq}`), tool, provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: bytes.toString('base64'), prev_digest: prev };
    if (seq === 2) e.close = true;
    prev = entryDigest(e) as string;
    out.push(e);
  });
  return out;
}

/** What a recorded personal job is made of. */
export interface PersonalJob {
  job: string;
  entries: ChainEntry[];
  receipts: Record<string, unknown>[];
  outcome: Record<string, string>;
}

/** POST a JSON body with a key. */
export function post(t: TestApp, path: string, body: unknown, key: string) {
  return t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** Record a plan, both receipts, both entries, a commitment and an outcome (under `outcomeKey`, role outcome for PAYMENTS). */
export async function recordPersonalJob(t: TestApp, job: string, outcomeKey: string): Promise<PersonalJob> {
  const expectStatus = async (p: Promise<{ status: number; body: unknown }>, status = 201) => {
    const r = await p;
    if (r.status !== status) throw new Error(`${job}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await expectStatus(post(t, '/api/plans', paymentPlan(job), t.keys.compliance));
  const entries = personalTimeline(job);
  const receipts = entries.map((e) => receiptFor(e));
  for (const r of receipts) await expectStatus(post(t, '/api/receipts', r, t.keys.producer));
  await expectStatus(post(t, `/api/jobs/${job}/entries`, entries, t.keys.producer));
  await expectStatus(post(t, `/api/jobs/${job}/commitments`, commitmentFor(entries), t.keys.producer));
  const outcome = outcomeFor({ name: job, job_id: job, receipt_id: entries[1].id, observation: JSON.stringify({ customer: personOf(job), settled: true }) });
  await expectStatus(post(t, '/api/outcomes', outcome, outcomeKey));
  return { job, entries, receipts, outcome };
}

/** The base64 of `s` at each of the three byte alignments, without the partial groups at either end. */
export function base64Cores(s: string): string[] {
  const b = Buffer.from(s, 'utf8');
  return [0, 1, 2].map((k) => {
    const t = Buffer.concat([Buffer.alloc(k), b]).toString('base64');
    // Drop the group holding the padding bytes and the last (possibly padded) group.
    return t.slice(k === 0 ? 0 : 4, t.length - 4);
  });
}

/**
 * Every byte sequence of the erased content of `jobs` that must appear
 * nowhere: the person string, its base64 at every alignment, each entry's
 * and the outcome's canonical bytes (base64) and output hash (prefixed and bare).
 */
export function forbiddenStrings(jobs: PersonalJob[]): string[] {
  const out = new Set<string>();
  for (const j of jobs) {
    const person = personOf(j.job);
    out.add(person);
    for (const c of base64Cores(person)) out.add(c);
    for (const e of j.entries) {
      out.add(e.canonical_bytes);
      const h = sha256Hex(Buffer.from(e.canonical_bytes, 'base64'));
      out.add(h);
    }
    out.add(j.outcome.canonical_bytes);
    out.add(j.outcome.output_hash.slice('sha256:'.length));
  }
  return [...out];
}

/** The forbidden strings found in `text`, each with a little context (empty when none). */
export function leaksIn(text: string, forbidden: readonly string[]): string[] {
  const hits: string[] = [];
  for (const f of forbidden) {
    const at = text.indexOf(f);
    if (at >= 0) hits.push(`${f.slice(0, 24)}... at ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 60), at + 40))}`);
  }
  return hits;
}
