/** Answer schemas of the verifiable log (issue 14). */
import { arrayOf, nullable, obj, ref, Schema } from '../common/openapi';

const b64hash = { type: 'string', description: 'base64 of a 32-byte SHA-256 hash' } as const;

export const LOG_SCHEMAS: Record<string, Schema> = {
  Discovery: obj(
    {
      draft: { type: 'string', enum: ['draft-zambo-aer1-07'] },
      origin: nullable({ type: 'string', description: 'the log origin (C2SP tlog-checkpoint), first line of every checkpoint' }),
      log_vkey: nullable({ type: 'string', description: 'C2SP vkey: <origin>+<hex key id>+<base64(0x01 || Ed25519 public key)>' }),
      checkpoint_url: { type: 'string' },
      signing: { type: 'string' },
      leaf: { type: 'string' },
      endpoints: { type: 'object', additionalProperties: { type: 'string' } },
    },
    'RFC 8615 discovery of this deployment.',
  ),
  Leaf: obj(
    {
      index: { type: 'integer', minimum: 0 },
      position: { type: 'integer', minimum: 1 },
      leaf: nullable({ type: 'string', description: 'base64 of the leaf bytes (the event hash input); null when withheld' }),
      leaf_hash: b64hash,
      withheld: { type: 'string', description: 'why the leaf bytes are not served to this caller' },
    },
    'One leaf of the log: leaf index = ledger position - 1.',
    ['withheld'],
  ),
  Leaves: obj({ leaves: arrayOf(ref('Leaf')) }, 'A range of leaves.'),
  InclusionProof: obj({ index: { type: 'integer' }, tree_size: { type: 'integer' }, leaf_hash: b64hash, proof: arrayOf(b64hash) }, 'RFC 9162 section 2.1.3 inclusion proof.'),
  ConsistencyProof: obj({ first: { type: 'integer' }, second: { type: 'integer' }, proof: arrayOf(b64hash) }, 'RFC 9162 section 2.1.4 consistency proof.'),
  LedgerSearch: {
    type: 'object',
    description: 'Matches: `receipts` for output_hash, `events` for event_hash.',
    properties: {
      receipts: arrayOf(obj({ id: { type: 'string' }, position: { type: 'integer' }, leaf_index: { type: 'integer' }, url: { type: 'string' } })),
      events: arrayOf(obj({ position: { type: 'integer' }, leaf_index: { type: 'integer' }, stream_id: { type: 'string' }, type: { type: 'string' } })),
    },
  },
  LogProof: obj(
    {
      format: { type: 'string', enum: ['aer1-log-proof/1'] },
      spec: { type: 'string' },
      log_vkey: nullable({ type: 'string' }),
      leaf_index: { type: 'integer' },
      position: { type: 'integer' },
      leaf: nullable({ type: 'string', description: 'base64 of the leaf bytes; null when withheld from this caller' }),
      withheld: { type: 'string' },
      leaf_hash: b64hash,
      tree_size: { type: 'integer' },
      proof: arrayOf(b64hash),
      checkpoint: { type: 'string', description: 'the signed checkpoint note, verbatim (with witness cosignature lines when witnesses are configured)' },
      timestamp: { type: 'string', description: 'base64 of a DER RFC 3161 TimeStampResp over the checkpoint body (present when the checkpoint is anchored)' },
      timestamp_info: ref('TimestampInfo'),
      nostr_event: { type: 'object', additionalProperties: true, description: 'the signed NIP-01 event anchoring this checkpoint, when it has one (check with `--nostr-pubkey`)' },
    },
    'A proof file: one event in the log, against a signed checkpoint (verify offline with `aer1 log verify-proof`).',
    ['withheld', 'timestamp', 'timestamp_info', 'nostr_event'],
  ),
  LogLocation: obj(
    {
      leaf_index: { type: 'integer' },
      position: { type: 'integer' },
      leaf_hash: b64hash,
      status: { type: 'string', enum: ['proven', 'pending', 'unavailable', 'failed'] },
      checkpoint: nullable(obj({ origin: { type: 'string' }, size: { type: 'integer' }, root: b64hash, signed_at: { type: 'string' }, url: { type: 'string' } })),
      inclusion_proof: nullable(arrayOf(b64hash)),
      proof_url: { type: 'string' },
      detail: { type: 'string' },
      timestamp: { type: 'object', allOf: [ref('TimestampInfo')], nullable: true },
    },
    "Where a record's event sits in the log; `proven` only when the inclusion proof was checked against the signed checkpoint.",
    ['detail', 'timestamp'],
  ),
  TimestampInfo: obj(
    {
      gen_time: { type: 'string', description: 'TSTInfo genTime (RFC 3339 UTC)' },
      tsa_name: { type: 'string', description: "subject DN of the TSA's signing certificate" },
      size: { type: 'integer', description: 'the anchored checkpoint size' },
      url: { type: 'string', description: 'where the token is served (DER, application/timestamp-reply)' },
    },
    'An RFC 3161 time anchor of a checkpoint (S10), verified on receipt against TSA_CERTS.',
  ),
  NostrAnchor: obj(
    {
      type: { type: 'string', enum: ['nostr'] },
      size: { type: 'integer', description: 'the anchored checkpoint size' },
      relay_event_id: { type: 'string', description: 'NIP-01 event id (64 hex)' },
      publisher_key: { type: 'string', description: 'the publisher key (64 hex, x-only secp256k1; NOSTR_KEY_FILE)' },
      relays: arrayOf({ type: 'string' }),
      published: { type: 'boolean', description: 'at least one relay answered OK true' },
      published_at: nullable({ type: 'string', description: 'the first OK (RFC 3339 UTC)' }),
      relay_status: arrayOf(obj({ url: { type: 'string' }, ok: { type: 'boolean' }, message: { type: 'string' }, at: { type: 'string' }, attempts: { type: 'integer' } })),
      event: { type: 'object', additionalProperties: true, description: 'the signed NIP-01 event; its content is the checkpoint note as served' },
      envelope: obj(
        {
          format: { type: 'string', enum: ['aer1-receipt-anchor/1'] },
          receipt_id: { type: 'string' },
          output_hash: nullable({ type: 'string' }),
          evidence_hash: b64hash,
          leaf_index: { type: 'integer' },
          checkpoint: obj({ origin: { type: 'string' }, size: { type: 'integer' }, root: b64hash }),
          inclusion_proof: arrayOf(b64hash),
          relay_event_id: { type: 'string' },
        },
        "Binds the receipt id, its output_hash and its evidence hash (its event's leaf hash) to the anchored checkpoint by the inclusion proof (checked before it is served).",
      ),
    },
    'A Nostr anchor of a checkpoint (draft S10, issue 33); `envelope` only in a receipt\'s answer.',
    ['envelope'],
  ),
  CheckpointAnchors: obj(
    {
      size: { type: 'integer' },
      anchors: arrayOf({
        oneOf: [
          obj({ type: { type: 'string', enum: ['rfc3161'] }, size: { type: 'integer' }, gen_time: { type: 'string' }, tsa_name: { type: 'string' }, received_at: { type: 'string' }, url: { type: 'string' } }),
          ref('NostrAnchor'),
        ],
      }),
    },
    'Every anchor of one checkpoint: RFC 3161 tokens and Nostr events.',
  ),
  TreeAudit: obj(
    {
      ok: { type: 'boolean' },
      leaves_checked: { type: 'integer' },
      nodes_checked: { type: 'integer' },
      checkpoints_checked: { type: 'integer' },
      root: nullable(b64hash),
      node_failure: nullable({ type: 'object', additionalProperties: true }),
      extra_leaves: { type: 'integer' },
      checkpoint_failure: nullable({ type: 'object', additionalProperties: true }),
    },
    'The RFC 6962 tree rebuilt from the events and compared with the stored one; every checkpoint checked.',
  ),
};
