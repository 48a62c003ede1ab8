import { BadInputError } from '../common/errors';
import { isNonEmptyString, isObject, isUuid } from '../core/aer1';

/** Body of POST /api/workflows/assemble. */
export interface AssembleRequest {
  session_id: string;
  goal: string;
  status: string;
  receipt_ids: string[];
  output: string;
}

/** Parse the body of POST /api/workflows/assemble: 400 `invalid_body` listing every problem. */
export function parseAssemble(v: unknown): AssembleRequest {
  if (!isObject(v)) throw new BadInputError('invalid_body', 'expected {session_id, goal, status, receipt_ids, output}');
  const problems: string[] = [];
  for (const k of ['session_id', 'goal', 'status'] as const) if (!isNonEmptyString(v[k])) problems.push(`${k} must be a non-empty string`);
  if (typeof v.output !== 'string') problems.push('output must be a string (its UTF-8 bytes are hashed into output_hash)');
  if (!Array.isArray(v.receipt_ids) || v.receipt_ids.length === 0) problems.push('receipt_ids must be a non-empty array of receipt ids');
  else if (!(v.receipt_ids as unknown[]).every(isUuid)) problems.push('every receipt_ids element must be a UUID string');
  if (problems.length) throw new BadInputError('invalid_body', problems.join('; '), { problems });
  return v as unknown as AssembleRequest;
}
