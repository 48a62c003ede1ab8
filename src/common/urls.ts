import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';

/** Public URLs of records (S9): stable, no account needed. Base from PUBLIC_BASE_URL, else http://localhost:PORT. */
@Injectable()
export class PublicUrls {
  readonly base: string;
  constructor(config: ConfigService<AppConfig, true>) {
    this.base = config.get('PUBLIC_BASE_URL', { infer: true }) ?? `http://localhost:${config.get('PORT', { infer: true })}`;
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
  coverage(id: string): string {
    return `${this.base}/coverage/${id}`;
  }
}
