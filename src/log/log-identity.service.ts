import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PublicUrls } from '../common/urls';
import { AppConfig } from '../config/configuration';
import { LogIdentity, resolveLogKey } from './log-key';

/** The logger context of the start warning about an origin that is not this start's address (log-key.ts originWarning). */
export const ORIGIN_LOG_CONTEXT = 'LogOrigin';

/**
 * The log's origin and signing key for this process (see log-key.ts), found
 * or made once at start; a configuration that must not start (a bad key
 * file, an origin that is not the key's) stops the process with its reason.
 * Logs the verifier key, which auditors pin (`aer1 log monitor --vkey`), and
 * warns once when the origin is not the address this start serves.
 */
@Injectable()
export class LogIdentityService {
  /** The identity, or null when this deployment signs no checkpoints ({@link reason}). */
  readonly current: LogIdentity | null;
  readonly reason: string;
  readonly publicBase: string;

  constructor(config: ConfigService<AppConfig, true>, urls: PublicUrls) {
    this.publicBase = urls.base;
    const logger = new Logger('VerifiableLog');
    const r = resolveLogKey({
      keyFile: config.get('LEDGER_SIGNING_KEY_FILE', { infer: true }),
      stateFile: config.get('LEDGER_CHECKPOINT_STATE_FILE', { infer: true }),
      origin: config.get('LEDGER_ORIGIN', { infer: true }),
      databaseUrl: config.get('DATABASE_URL', { infer: true }),
      publicBaseUrl: config.get('PUBLIC_BASE_URL', { infer: true }),
      port: config.get('PORT', { infer: true }),
    });
    for (const w of r.warnings) logger.warn(w);
    // Its own context: the ledger CLI, which serves no address, leaves it out.
    if (r.ok && r.originWarning) new Logger(ORIGIN_LOG_CONTEXT).warn(r.originWarning);
    if (r.ok) {
      this.current = r.identity;
      this.reason = '';
      const where = r.identity.source.kind === 'created' ? `created ${r.identity.source.path} (mode 0600; back it up)` : r.identity.source.kind === 'file' ? `key ${r.identity.source.path}` : 'an in-memory key (this database lives only as long as the process)';
      logger.log(`log origin ${r.identity.origin}, ${where}; verifier key: ${r.identity.vkey}; last signed checkpoint kept in ${r.identity.statePath ?? 'memory'}`);
    } else {
      this.current = null;
      this.reason = r.reason;
      logger.error(`checkpoints are not signed: ${r.reason}`);
    }
  }
}
