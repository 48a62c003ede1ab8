/**
 * Configuration from the environment, validated at start (an invalid value
 * stops the process with a message naming the variable).
 */
import { plainToInstance, Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, validateSync } from 'class-validator';
import { DEFAULT_DATABASE_URL } from '../database/database-url';

export class AppConfig {
  /** HTTP port. */
  @Transform(({ value }) => (value === undefined || value === '' ? 3000 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /** `sqlite:<path>` (default `sqlite:./data/ledger.sqlite`) or `postgres://...`. */
  @IsString()
  @Matches(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, { message: 'DATABASE_URL must be sqlite:<path> or postgres://...' })
  DATABASE_URL = DEFAULT_DATABASE_URL;

  /** Base of the public URLs in records and pages, without a trailing slash. */
  @IsOptional()
  @IsString()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'PUBLIC_BASE_URL must be an http(s) URL' })
  PUBLIC_BASE_URL?: string;

  /** Optional bootstrap admin key (at least 16 characters). */
  @IsOptional()
  @IsString()
  @MinLength(16)
  LEDGER_ADMIN_KEY?: string;

  /** Largest accepted request body in bytes (default 1 MiB). */
  @Transform(({ value }) => (value === undefined || value === '' ? 1_048_576 : Number(value)))
  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES = 1_048_576;

  /** Requests per minute per client on the verify endpoints (S13). */
  @Transform(({ value }) => (value === undefined || value === '' ? 120 : Number(value)))
  @IsInt()
  @Min(1)
  VERIFY_RATE_LIMIT = 120;

  /** Redis for the verification queue; without it batches run in process. */
  @IsOptional()
  @IsString()
  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be redis://...' })
  REDIS_URL?: string;

  /** pino log level. */
  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;
}

/** `validate` hook for ConfigModule: returns the typed config or throws one readable error. */
export function validateConfig(env: Record<string, unknown>): AppConfig {
  const config = plainToInstance(AppConfig, env, { exposeDefaultValues: true });
  const errors = validateSync(config, { skipMissingProperties: false, whitelist: false });
  if (errors.length > 0) {
    throw new Error(`invalid configuration: ${errors.map((e) => Object.values(e.constraints ?? {}).join(', ')).join('; ')}`);
  }
  if (config.PUBLIC_BASE_URL) config.PUBLIC_BASE_URL = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  return config;
}
