/**
 * The Nostr anchoring variables (issue 33, docs/nostr.md), validated with the
 * rest of the configuration (AppConfig extends this class); NOSTR_RELAYS and
 * NOSTR_KEY_FILE are checked together by parseNostrSettings
 * (src/log/nostr-config.ts).
 */
import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export { parseNostrSettings } from '../log/nostr-config';

export class NostrVariables {
  /**
   * Comma-separated relay URLs (`wss://`; `ws://` only with NOSTR_ALLOW_INSECURE=true) the newest witnessed
   * checkpoint is published to as a NIP-01 event; set together with NOSTR_KEY_FILE. Unset: no Nostr anchoring.
   */
  @IsOptional()
  @IsString()
  NOSTR_RELAYS?: string;

  /** The publisher's secp256k1 secret key file (64 hex or nsec1...; `npm run ledger -- create-nostr-key --out FILE`). */
  @IsOptional()
  @IsString()
  NOSTR_KEY_FILE?: string;

  /** `true` allows `ws://` relay URLs (a relay on the same host); default false. */
  @Transform(({ value }) => value === true || value === 'true')
  @IsBoolean()
  NOSTR_ALLOW_INSECURE = false;

  /** Publish a new checkpoint to the relays at most this often, in ms (default 3600000, one hour; 0: every new one). */
  @Transform(({ value }) => (value === undefined || value === '' ? 3_600_000 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(86_400_000)
  NOSTR_INTERVAL_MS = 3_600_000;
}
