/**
 * `aer1 log inclusion (--url BASE | --tiles URL [--url BASE]) --vkey VKEY (--receipt ID | --index I)`:
 * fetch the checkpoint, an inclusion proof and the leaf of one record, and
 * check them as `verify-proof` does. From the JSON API (`--url`), or from a
 * C2SP tlog-tiles copy (`--tiles`: the static copy, or the API's own tile
 * paths): the proof is then computed here, with the core, from tiles checked
 * against the checkpoint; `--receipt` with `--tiles` also needs `--url` to
 * find the receipt's leaf index. Exit 0 included; 1 a check failed, the
 * receipt is not recorded, or the leaf is not yet under the checkpoint; 2
 * usage or network (or a copy that is not the checkpoint's tree).
 */
import { decodeStrictBase64, isObject } from '../../core/aer1';
import { Checkpoint, verifyCheckpoint } from '../../core/tlog';
import { checkProof, ProofParts } from '../../core/tlog/log-proof';
import { CliError, CliIo, errorText, EXIT_NOT_VALID, EXIT_OK, writeAll } from '../io';
import { baseUrl, DEFAULT_TIMEOUT_S, getJson, getOk, hashList, httpGet, LogUnreachable, shortBody } from '../log-client';
import { trustPolicy } from '../log-options';
import { safe } from '../report';
import { leafFromTiles } from '../tiles-client';
import { indent, PolicyOptions, proofJson, proofText } from './log-output';

export interface InclusionOptions extends PolicyOptions {
  url?: string;
  /** A C2SP tlog-tiles prefix (static copy or the API's base) to read the checkpoint, proof and leaf from. */
  tiles?: string;
  receipt?: string;
  index?: number;
  timeout?: number;
}

/** `aer1 log inclusion`: returns the exit code. */
export async function inclusionCommand(opts: InclusionOptions, io: CliIo): Promise<number> {
  const policy = trustPolicy(opts);
  const tiles = opts.tiles === undefined ? null : baseUrl(opts.tiles, '--tiles');
  if (tiles !== null && opts.receipt !== undefined && opts.url === undefined) throw new CliError('--receipt with --tiles needs --url BASE (the API) to find the receipt\'s leaf index; or give --index I');
  const base = tiles !== null && opts.url === undefined ? tiles : baseUrl(opts.url);
  if ((opts.receipt === undefined) === (opts.index === undefined)) throw new CliError('give exactly one of --receipt ID and --index I');
  const t = opts.timeout ?? DEFAULT_TIMEOUT_S;
  const say = async (text: string, json: Record<string, unknown>): Promise<number> => {
    await writeAll(io.stdout, opts.json ? JSON.stringify(json, null, 2) + '\n' : text + '\n');
    return EXIT_NOT_VALID;
  };
  let index: number;
  if (opts.receipt !== undefined) {
    const url = `${base}/api/receipts/${encodeURIComponent(opts.receipt)}/proof`;
    const a = await httpGet(url, t, 'application/json');
    if (a.status === 404) return say(`Result: NOT VERIFIED: the log holds no receipt ${safe(opts.receipt)} (404)`, { verified: false, failed: ['not_found'], receipt_id: opts.receipt });
    if (a.status !== 200) throw new LogUnreachable(`${url} answered ${a.status}${shortBody(a.body)}`);
    let doc: unknown;
    try {
      doc = JSON.parse(a.body.toString('utf8'));
    } catch {
      doc = null;
    }
    if (!isObject(doc) || typeof doc.leaf_index !== 'number' || !Number.isSafeInteger(doc.leaf_index) || doc.leaf_index < 0) throw new LogUnreachable(`${url} did not answer a proof file with a leaf_index`);
    index = doc.leaf_index;
  } else index = opts.index as number;

  const from = tiles ?? base;
  const note = (await getOk(`${from}/checkpoint`, t, 'text/plain')).toString('utf8');
  let cp: Checkpoint;
  try {
    cp = verifyCheckpoint(note, [policy.log], policy.log.name).checkpoint;
  } catch (e) {
    return say(`Result: NOT VERIFIED: the log's checkpoint does not verify with --vkey: ${safe(errorText(e), 300)}\nCheckpoint served at ${from}/checkpoint:\n${indent(note)}`, {
      verified: false,
      failed: ['checkpoint_signature'],
      error: errorText(e),
      served_checkpoint: note,
    });
  }
  if (index >= cp.size) {
    return say(`Result: NOT VERIFIED: leaf ${index} is not under the latest checkpoint yet (size ${cp.size}); try again after the next checkpoint`, { verified: false, failed: ['not_yet_in_checkpoint'], leaf_index: index, tree_size: cp.size });
  }
  let parts: ProofParts;
  if (tiles !== null) {
    const got = await leafFromTiles({ base: tiles, timeoutS: t }, index, cp);
    if (got.leaf === null) throw new LogUnreachable(`the entry of leaf ${index} at ${tiles} is empty: its content is withheld from the public (docs/tiles.md); an auditor's key reads it from the API (GET /api/ledger/leaves/${index})`);
    parts = { form: 'fetched', index, leaf: got.leaf, statedLeafHash: got.leafHash, statedTreeSize: null, proof: got.proof, checkpoint: note, timestamp: null };
  } else {
    const r = await fromApi(base, index, cp, note, t);
    if ('mismatch' in r) return say(r.mismatch, { verified: false, failed: ['leaf_hash'] });
    if ('withheld' in r) {
      // A leaf the log does not serve (its publication, or a format 1/2 leaf whose content was erased, issue 29): named, never checked.
      return say(`Result: NOT VERIFIED: leaf ${index} is not served, so it cannot be checked here: ${safe(r.withheld, 600)}`, { verified: false, failed: ['leaf_withheld'], leaf_index: index, withheld: r.withheld });
    }
    parts = r;
  }
  const report = await checkProof(parts, policy);
  if (opts.receipt !== undefined) {
    // The leaf must be the receipt asked for, not some other event (format 3: named by its public receipt_id; the leaf holds no receipt bytes).
    const [e, id] = [report.record, opts.receipt.toLowerCase()];
    const ok = e !== null && e.stream_id === `receipt:${id}` && e.type === 'ReceiptRecorded' && (e.format === 3 ? e.ids?.receipt_id === id : report.receipt?.id?.toLowerCase() === id);
    report.checks.push({ name: 'leaf_is_receipt', ok, ...(ok ? {} : { code: 'not_this_receipt' }), detail: ok ? `the leaf is receipt ${opts.receipt}'s ReceiptRecorded event` : `the leaf is not the ReceiptRecorded event of receipt ${opts.receipt}` });
    if (!ok) {
      report.verified = false;
      report.failed.push('leaf_is_receipt');
    }
  }
  await writeAll(io.stdout, opts.json ? proofJson(report, { url: from, ...(tiles !== null ? { tiles: true } : {}) }) : proofText(report, `${from}${tiles !== null ? ' (tiles)' : ''}, leaf ${index}`));
  return report.verified ? EXIT_OK : EXIT_NOT_VALID;
}

/** The inclusion proof and leaf of `index` under `cp` from the JSON API, or the mismatch of their leaf hashes. */
async function fromApi(base: string, index: number, cp: Checkpoint, note: string, t: number): Promise<ProofParts | { mismatch: string } | { withheld: string }> {
  const proofUrl = `${base}/api/ledger/proof/inclusion?index=${index}&tree_size=${cp.size}`;
  const proof = await getJson(proofUrl, t);
  if (proof.index !== index || proof.tree_size !== cp.size) throw new LogUnreachable(`${proofUrl} answered a proof for index ${String(proof.index)} and tree size ${String(proof.tree_size)}`);
  const leafUrl = `${base}/api/ledger/leaves/${index}`;
  const leafDoc = await getJson(leafUrl, t);
  if (leafDoc.leaf === null && typeof leafDoc.withheld === 'string') return { withheld: leafDoc.withheld };
  const leaf = decodeStrictBase64(leafDoc.leaf);
  if (leaf === null || leaf.length === 0) throw new LogUnreachable(`${leafUrl}: "leaf" is not base64`);
  const statedLeafHash = decodeStrictBase64(leafDoc.leaf_hash);
  const proofLeafHash = decodeStrictBase64(proof.leaf_hash);
  if (statedLeafHash === null || statedLeafHash.length !== 32) throw new LogUnreachable(`${leafUrl}: "leaf_hash" is not base64 of 32 bytes`);
  if (proofLeafHash !== null && !proofLeafHash.equals(statedLeafHash)) {
    return { mismatch: `Result: NOT VERIFIED: the inclusion proof is for leaf hash ${proofLeafHash.toString('base64')}, the leaf served is ${statedLeafHash.toString('base64')}` };
  }
  return { form: 'fetched', index, leaf, statedLeafHash, statedTreeSize: null, proof: hashList(proof.proof, proofUrl), checkpoint: note, timestamp: null };
}
