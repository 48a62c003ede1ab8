/**
 * The one error type of the verifiable-log core. Every failure on input that
 * may come from an attacker (proofs, notes, checkpoints, proof files, keys)
 * is a `TlogError` with a fixed `code` and structured `details`, never an
 * untyped exception. Hashes in `details` are base64 strings (JSON-friendly).
 *
 * The service maps these to its own typed errors (src/common/errors.ts, defined in src/core/errors.ts);
 * this module has no framework dependency.
 */

/** Every code a {@link TlogError} can carry. */
export type TlogErrorCode =
  // Merkle proofs (RFC 6962 / RFC 9162 section 2.1)
  | 'size_invalid'
  | 'index_out_of_range'
  | 'sizes_out_of_order'
  | 'consistency_from_empty_tree'
  | 'proof_malformed'
  | 'proof_wrong_length'
  | 'hash_wrong_length'
  | 'root_mismatch'
  // stored-node reads (the service's reader broke its contract)
  | 'reader_invalid'
  // signed notes (c2sp.org/signed-note)
  | 'note_not_utf8'
  | 'note_control_character'
  | 'note_too_large'
  | 'note_no_signature_block'
  | 'note_missing_final_newline'
  | 'note_signature_line_malformed'
  | 'note_key_name_invalid'
  | 'note_too_many_signatures'
  | 'note_signature_invalid'
  | 'note_no_trusted_signature'
  | 'note_text_invalid'
  // keys
  | 'key_invalid'
  | 'key_id_mismatch'
  | 'key_type_unsupported'
  // checkpoints (c2sp.org/tlog-checkpoint)
  | 'checkpoint_malformed'
  | 'checkpoint_origin_invalid'
  | 'checkpoint_size_invalid'
  | 'checkpoint_root_invalid'
  | 'checkpoint_extension_invalid'
  | 'checkpoint_origin_mismatch'
  // cosignatures (c2sp.org/tlog-cosignature)
  | 'cosignature_malformed'
  | 'cosignature_timestamp_invalid'
  | 'cosignature_invalid'
  // proof files (c2sp.org/tlog-proof)
  | 'proof_file_malformed'
  // witness protocol bodies (c2sp.org/tlog-witness)
  | 'witness_request_malformed'
  // tiles and entry bundles (c2sp.org/tlog-tiles)
  | 'tile_path_invalid'
  | 'tile_malformed'
  | 'bundle_malformed'

  // stream-heads statements (issue 30, src/core/tlog/stream-heads.ts)
  | 'heads_malformed'
  | 'heads_not_a_statement'
  | 'heads_origin_invalid'
  | 'heads_origin_mismatch'
  | 'heads_size_invalid'
  | 'heads_root_invalid'
  | 'heads_line_malformed'
  | 'heads_stream_id_invalid'
  | 'heads_position_invalid'
  | 'heads_hash_invalid'
  | 'heads_not_sorted'
  | 'heads_duplicate_stream'
  | 'heads_too_many';

/** A typed failure: `code` is stable (tests and HTTP mapping use it), `details` names what failed. */
export class TlogError extends Error {
  constructor(
    readonly code: TlogErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'TlogError';
  }
}

/** True when `e` is a {@link TlogError} (optionally with this code). */
export function isTlogError(e: unknown, code?: TlogErrorCode): e is TlogError {
  return e instanceof TlogError && (code === undefined || e.code === code);
}
