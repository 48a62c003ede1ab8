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
  receiptVerify(id: string): string {
    return `${this.base}/api/receipt/${id.toLowerCase()}/verify`;
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
  workflowVerify(id: string): string {
    return `${this.base}/api/workflow/${id.toLowerCase()}/verify`;
  }
  coverage(id: string): string {
    return `${this.base}/coverage/${id}`;
  }
}
