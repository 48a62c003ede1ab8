import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';

/** Public URLs of records (S9): stable, no account needed. Base from PUBLIC_BASE_URL, else http://localhost:PORT. */
@Injectable()
export class PublicUrls {
  readonly base: string;
  /** Whether the base's host is loopback (localhost, 127.0.0.0/8, ::1): such URLs reach no one else. */
  readonly loopback: boolean;
  constructor(config: ConfigService<AppConfig, true>) {
    const declared = config.get('PUBLIC_BASE_URL', { infer: true });
    this.base = declared ?? `http://localhost:${config.get('PORT', { infer: true })}`;
    this.loopback = isLoopbackUrl(this.base);
    const warning = publicBaseUrlWarning(declared, config.get('NODE_ENV', { infer: true }), this.base);
    if (warning) new Logger('PublicUrls').warn(warning);
  }
  receipt(id: string): string {
    return `${this.base}/run/${id.toLowerCase()}`;
  }
  /** The machine verifier (plural path; `/api/receipt/{id}/verify` is its deprecated alias). */
  receiptVerify(id: string): string {
    return `${this.base}/api/receipts/${id.toLowerCase()}/verify`;
  }
  /** The stored record (JSON): the `Location` of a recorded receipt. */
  receiptRecord(id: string): string {
    return `${this.base}/api/receipts/${id.toLowerCase()}`;
  }
  /** The stored timeline (JSON): the `Location` of appended entries, an import and a commitment. */
  jobTimeline(jobId: string): string {
    return `${this.base}/api/jobs/${encodeURIComponent(jobId)}/timeline`;
  }
  job(jobId: string): string {
    return `${this.base}/jobs/${encodeURIComponent(jobId)}`;
  }
  jobVerify(jobId: string): string {
    return `${this.base}/api/jobs/${encodeURIComponent(jobId)}/verify`;
  }
  workflow(id: string): string {
    return `${this.base}/workflow/${id.toLowerCase()}`;
  }
  /** The machine verifier (plural path; `/api/workflow/{id}/verify` is its deprecated alias). */
  workflowVerify(id: string): string {
    return `${this.base}/api/workflows/${id.toLowerCase()}/verify`;
  }
  planVersion(planId: string, version: number): string {
    return `${this.base}/api/plans/${planId}/versions/${version}`;
  }
  /** An erasure (issue 29): who erased which payloads, when, why. */
  erasure(id: string): string {
    return `${this.base}/api/erasures/${id.toLowerCase()}`;
  }
  coverageReport(id: string): string {
    return `${this.base}/api/coverage-reports/${id}`;
  }
  key(id: string): string {
    return `${this.base}/api/keys/${id}`;
  }
  /** A path under the public base (for `Link` and list answers). */
  path(p: string): string {
    return `${this.base}${p}`;
  }
  /** The public page of an outcome report (issue 18). */
  outcome(id: string): string {
    return `${this.base}/outcome/${id.toLowerCase()}`;
  }
  /** The machine verifier of an outcome report. */
  outcomeVerify(id: string): string {
    return `${this.base}/api/outcomes/${id.toLowerCase()}/verify`;
  }
  coverage(id: string): string {
    return `${this.base}/coverage/${id}`;
  }
}

/** The start warning when PUBLIC_BASE_URL is unset outside development and test, else null. */
export function publicBaseUrlWarning(declared: string | undefined, nodeEnv: string | undefined, base: string): string | null {
  if (declared !== undefined || nodeEnv === 'development' || nodeEnv === 'test') return null;
  return `PUBLIC_BASE_URL is unset: records and pages will link to ${base}, and assembling a workflow (which writes that URL into its immutable bytes) is refused unless ALLOW_LOOPBACK_VERIFY_URL=true; set PUBLIC_BASE_URL to this ledger's public address`;
}

/** True when `url`'s host is loopback: `localhost` (or a name under it), 127.0.0.0/8, or ::1. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
