/**
 * The OpenAPI contract: named component schemas (written by hand next to each
 * module, in `src/<module>/dto/*.schemas.ts`, from what the services really
 * return), the one `Error` body with its reason codes, and decorators that
 * attach them to operations. Schemas list the members a client can rely on;
 * objects stay open (`additionalProperties` allowed) so a later release may
 * add members without breaking a generated client.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

export type Schema = SchemaObject | ReferenceObject;

/** `$ref` to a component schema. */
export const ref = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

/** A nullable schema (OpenAPI 3.0 `nullable`). */
export const nullable = (s: SchemaObject): SchemaObject => ({ ...s, nullable: true });

/** An array of `items`. */
export const arrayOf = (items: Schema, description?: string): SchemaObject => ({ type: 'array', items, ...(description ? { description } : {}) });

/** An object whose listed members are all required (others may appear). */
export const obj = (properties: Record<string, Schema>, description?: string, optional: string[] = []): SchemaObject => ({
  type: 'object',
  ...(description ? { description } : {}),
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  properties,
});

/** Reason codes the `error` member of an error body takes (grep `Error('` in src; AER-1 codes go in `reasons`). */
export const ERROR_CODES = [
  // 400
  'empty_body', 'malformed_json', 'invalid_utf8', 'duplicate_member', 'too_deep', 'not_object', 'lone_surrogate', 'invalid_body', 'invalid_request', 'invalid_query',
  'invalid_targets', 'too_many_targets', 'invalid_scope', 'invalid_version', 'wrapped_workflow', 'unsupported_character', 'value_too_large', 'invalid_content_encoding',
  'request_aborted', 'bad_request', 'repeated_parameter', 'request_timeout', 'headers_too_large', 'leaf_index_out_of_range', 'tile_path_invalid', 'otlp_decode_failed', 'otlp_attribute_type',
  // 401, 403
  'missing_key', 'invalid_key', 'invalid_authorization', 'key_revoked', 'forbidden_role', 'not_owner', 'provenance_not_permitted', 'system_not_permitted',
  // 404, 405
  'not_found', 'method_not_allowed', 'no_checkpoint', 'checkpoint_not_found', 'tree_size_beyond_checkpoint', 'tile_not_found', 'leaf_not_found', 'erasure_target_not_found',
  // 409
  'receipt_id_conflict', 'workflow_id_conflict', 'correction_same_id', 'already_superseded', 'timeline_exists', 'timeline_imported', 'timeline_closed',
  'seq_not_contiguous', 'link_mismatch', 'genesis_prev_digest', 'timeline_not_closed', 'timeline_not_valid', 'plan_exists', 'plan_version_conflict', 'expected_version_conflict', 'tree_mismatch', 'projection_mismatch', 'stream_head_unbacked',
  'outcome_id_conflict', 'webhook_limit_key', 'webhook_limit_owner', 'already_erased', 'timeline_head_erased',
  // 410
  'content_erased', // also 422: a workflow naming an erased step receipt
  // 413, 415
  'body_too_large', 'too_many_spans', 'unsupported_encoding', 'unsupported_media_type',
  // 422
  'verification_failed', 'invalid_commitment', 'job_id_mismatch', 'malformed_array', 'no_entries', 'invalid_plan', 'no_plan', 'plan_erased', 'position_beyond_head',
  'step_receipt_missing', 'duplicate_step_receipt_id', 'url_has_userinfo', 'not_http_url', 'invalid_role', 'invalid_name', 'invalid_key_options', 'receipt_not_recorded', 'receipt_not_in_job', 'reserved_tool',
  'not_erasable', 'invalid_erasure',
  'invalid_webhook_url', 'webhook_address_refused', 'unknown_webhook_event', 'invalid_attestation', 'attestation_signature_invalid', 'attestation_key_untrusted',
  // 429, 5xx
  'rate_limited', 'quota_exceeded', 'stream_limit_key', 'stream_limit_server', 'server_busy', 'bandwidth_exceeded', 'queue_unavailable', 'log_unavailable', 'database_unavailable', 'internal_error',
] as const;

/** The body of every error (src/common/error.filter.ts). */
export const ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'Every error answer: a reason code in `error`, prose in `message`, and details (e.g. `reasons`: AER-1 reason codes, `checks`, `problems`, `retry_after_seconds`).',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string', enum: [...ERROR_CODES], description: 'A stable reason code.' },
    message: { type: 'string', description: 'Prose for people; never parse it.' },
    reasons: { $ref: '#/components/schemas/ReasonCodes' },
    retry_after_seconds: { type: 'integer', description: '429: seconds until the quota allows again (also in Retry-After).' },
  },
};

/** What each status means for a client; the codes listed are those the status carries. */
const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request (not JSON, not UTF-8, duplicate members, bad query, wrong shape): `error` names the problem. Nothing was recorded.',
  401: 'No usable key: `missing_key`, `invalid_authorization`, `invalid_key`, `key_revoked`.',
  403: 'The key may not do this: `forbidden_role`, `not_owner`, `provenance_not_permitted`.',
  404: '`not_found`: no such record.',
  409: 'Conflicts with what the ledger holds (records are never altered).',
  410: '`content_erased`: the content was erased for good (issue 29); `erasure` says who erased it, when, why and on which basis.',
  413: '`body_too_large`: the body exceeds BODY_LIMIT_BYTES; the rest is not read.',
  415: '`unsupported_encoding` / `unsupported_media_type`: a Content-Encoding, charset or Content-Type the endpoint does not take.',
  422: 'Well-formed but does not verify or breaks a rule: `error` is the code, `reasons` the AER-1 reason codes. Nothing was recorded.',
  429: '`rate_limited` (public read budget: VERIFY_RATE_LIMIT per minute per client, KEY_READ_RATE_LIMIT per key), `quota_exceeded` (REPORT_QUOTA_PER_HOUR per key), `stream_limit_key` / `stream_limit_server` (open event streams, SSE_MAX_PER_KEY / SSE_MAX_STREAMS), `server_busy` (HEAVY_READ_CONCURRENCY heavy reads already running in this process), or `bandwidth_exceeded` (tiles: TILE_BANDWIDTH_KIB_PER_MINUTE per client); see Retry-After.',
  503: '`queue_unavailable`: the verification queue (Redis) does not answer; `database_unavailable`: the database does not answer or refuses connections (Retry-After); nothing was recorded.',
};

/** Statuses every write (a route with a key) may answer besides its own. */
export const WRITE_ERRORS = [400, 401, 403, 413, 415, 422] as const;

/**
 * Document error answers with the `Error` schema: each status once, with the
 * codes it carries (`codes` adds endpoint-specific ones to the description).
 */
export function ApiErrors(statuses: readonly number[], codes: Partial<Record<number, string>> = {}): MethodDecorator {
  return applyDecorators(
    ...[...new Set(statuses)].map((status) =>
      ApiResponse({
        status,
        description: codes[status] ? `${STATUS_TEXT[status] ?? ''} ${codes[status]}`.trim() : (STATUS_TEXT[status] ?? 'error'),
        content: { 'application/json': { schema: ref('Error') } },
        ...(status === 429 ? { headers: { 'Retry-After': { description: 'seconds', schema: { type: 'integer' } } } } : {}),
      }),
    ),
  );
}

/** A JSON success answer with a named component schema; `headers` documents Location and the like. */
export function ApiAnswer(status: number, schema: string | Schema, description: string, headers: Record<string, string> = {}): MethodDecorator {
  return ApiResponse({
    status,
    description,
    content: { 'application/json': { schema: typeof schema === 'string' ? ref(schema) : schema } },
    ...(Object.keys(headers).length > 0 ? { headers: Object.fromEntries(Object.entries(headers).map(([k, d]) => [k, { description: d, schema: { type: 'string' } }])) } : {}),
  });
}

/** 201 with `Location` (and any other `headers`, name to description). */
export const ApiCreated = (schema: string | Schema, description: string, headers: Record<string, string> = {}): MethodDecorator =>
  ApiAnswer(201, schema, description, { Location: 'URL of the created record (its JSON form)', ...headers });

/** A JSON request body with a named component schema. */
export const ApiJsonBody = (schema: string | Schema, description?: string): MethodDecorator =>
  ApiBody({ required: true, description, schema: typeof schema === 'string' ? ref(schema) : schema });

/** Cursor pagination parameters (`after`, `limit`) of the list endpoints. */
export const ApiCursor = (): MethodDecorator =>
  applyDecorators(
    ApiQuery({ name: 'after', required: false, schema: { type: 'string' }, description: 'the `next` cursor of the previous page (opaque); absent: from the start' }),
    ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000 }, description: 'items per page (1 to 1000, default 100)' }),
  );

/** Request bodies with one schema per media type, by operation id (ApiBody takes one schema for all). */
const BODY_CONTENT = new Map<string, { description: string; content: Record<string, { schema: Schema }> }>();

/**
 * A request body with a schema per media type (e.g. JSON array or NDJSON).
 * Recorded when the controller is defined and written into the document by
 * {@link addSchemas}; `operationId` is the operation's.
 */
export function ApiBodyContent(operationId: string, description: string, content: Record<string, { schema: Schema }>): MethodDecorator {
  BODY_CONTENT.set(operationId, { description, content });
  return ApiConsumes(...Object.keys(content));
}

/** Add the component schemas to the document and the per-media-type request bodies (idempotent). */
export function addSchemas(doc: OpenAPIObject, ...sets: Record<string, Schema>[]): OpenAPIObject {
  doc.components ??= {};
  doc.components.schemas ??= {};
  for (const set of sets) Object.assign(doc.components.schemas, set);
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item) as { operationId?: string; requestBody?: unknown }[]) {
      const body = op && typeof op === 'object' && op.operationId ? BODY_CONTENT.get(op.operationId) : undefined;
      if (body) op.requestBody = { required: true, ...body };
    }
  }
  return doc;
}

/**
 * Fallback operation id (`verifyReceipts` for ReceiptsController.verify);
 * every operation sets a readable one with `@ApiOperation({operationId})`,
 * which takes precedence.
 */
export function operationIdFactory(controllerKey: string, methodKey: string): string {
  return `${methodKey}${controllerKey.replace(/Controller$/, '')}`;
}


/**
 * Marks an answer from a deprecated path (kept for one release): RFC 9745
 * `Deprecation` (a structured date: the release that deprecated it) and RFC
 * 8288 `Link: <successor>; rel="successor-version"`.
 */
export function markDeprecated(res: { header(name: string, value: string): unknown }, successor: string): void {
  res.header('Deprecation', DEPRECATED_SINCE);
  res.header('Link', `<${successor}>; rel="successor-version"`);
}

/** RFC 9745 structured-field date of the release that deprecated the singular verify paths (2026-12-01). */
export const DEPRECATED_SINCE = '@1796083200';
