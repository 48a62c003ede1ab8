import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { CommitmentTrust, parseTrustedKeys } from '../core/aer1/attestation';
import { AppConfig } from '../config/configuration';
import { LogIdentityService } from './log-identity.service';

/**
 * What endpoint commitments are judged against (issue 15): the log's vkey
 * (ledger-issued commitments) and `TRUSTED_COMMITMENT_KEYS` (attested ones),
 * read once at start (validated by the configuration: a bad key stops the process).
 */
@Injectable()
export class CommitmentTrustService {
  readonly trust: CommitmentTrust;

  constructor(config: ConfigService<AppConfig, true>, identity: LogIdentityService) {
    const trusted = parseTrustedKeys(config.get('TRUSTED_COMMITMENT_KEYS', { infer: true }));
    this.trust = Object.freeze({ log_vkey: identity.current?.vkey ?? null, trusted });
    if (trusted.length > 0) new Logger('Commitments').log(`commitments attested by: ${trusted.map((v) => v.name).join(', ')}`);
  }
}
