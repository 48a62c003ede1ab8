/**
 * LedgerMetrics (issue 17): the typed methods other modules call, and what
 * each puts in the Prometheus text. Bounded labels: route templates, a fixed
 * label for unmatched routes, at most MAX_WITNESS_LABELS witness names.
 */
import { LedgerMetrics, MAX_WITNESS_LABELS, UNMATCHED_ROUTE } from '../../src/metrics/ledger-metrics';
import { has, parseProm, value } from './prom-text';

async function samples(m: LedgerMetrics) {
  return parseProm(await m.scrape());
}

describe('LedgerMetrics', () => {
  it('counts HTTP answers by method, route template and status, with duration buckets by status class', async () => {
    const m = new LedgerMetrics(true);
    m.httpRequest('post', '/api/receipts', 201, 0.004);
    m.httpRequest('POST', '/api/receipts', 201, 0.2);
    m.httpRequest('GET', '/api/receipts/:id', 404, 0.001);
    m.httpRequest('GET', null, 404, 0.001);
    m.httpRequest('BREW', '', 418, 0.001);
    const s = await samples(m);
    expect(value(s, 'aer1_http_requests_total', { method: 'POST', route: '/api/receipts', status: '201' })).toBe(2);
    expect(value(s, 'aer1_http_requests_total', { method: 'GET', route: '/api/receipts/:id', status: '404' })).toBe(1);
    expect(value(s, 'aer1_http_requests_total', { method: 'GET', route: UNMATCHED_ROUTE, status: '404' })).toBe(1);
    expect(value(s, 'aer1_http_requests_total', { method: 'OTHER', route: UNMATCHED_ROUTE, status: '418' })).toBe(1);
    const b = (le: string) => value(s, 'aer1_http_request_duration_seconds_bucket', { method: 'POST', route: '/api/receipts', status_class: '2xx', le });
    expect([b('0.001'), b('0.005'), b('0.1'), b('0.25'), b('+Inf')]).toEqual([0, 1, 1, 2, 2]);
    expect(value(s, 'aer1_http_request_duration_seconds_count', { method: 'POST', route: '/api/receipts', status_class: '2xx' })).toBe(2);
    expect(value(s, 'aer1_http_request_duration_seconds_sum', { method: 'POST', route: '/api/receipts', status_class: '2xx' })).toBeCloseTo(0.204, 6);
  });

  it('counts appended events and the group size only when their transaction commits', async () => {
    const m = new LedgerMetrics(true);
    const tx1 = {};
    const tx2 = {};
    const tx3 = {};
    m.appended(tx1, [{ type: 'ReceiptRecorded' }]);
    m.appended(tx1, [{ type: 'ReceiptRecorded' }, { type: 'TimelineEntryAppended' }]);
    m.writeFinished([tx1], true, { waited: [0.002], total: 0.01, commit: 0.004 });
    m.appended(tx2, [{ type: 'ReceiptRecorded' }]);
    m.writeFinished([tx2], false, { waited: [0], total: 0.003, commit: 0 });
    m.writeFinished([tx3], true, { waited: [0], total: 0.001, commit: 0.0005 }); // a write that appended nothing (a key created)
    const s = await samples(m);
    expect(value(s, 'aer1_events_appended_total', { type: 'ReceiptRecorded' })).toBe(2);
    expect(value(s, 'aer1_events_appended_total', { type: 'TimelineEntryAppended' })).toBe(1);
    expect(value(s, 'aer1_append_group_size_count')).toBe(1);
    expect(value(s, 'aer1_append_group_size_sum')).toBe(3);
    expect(value(s, 'aer1_append_group_size_bucket', { le: '2' })).toBe(0);
    expect(value(s, 'aer1_append_group_size_bucket', { le: '5' })).toBe(1);
    expect(value(s, 'aer1_write_transaction_seconds_count', { outcome: 'commit' })).toBe(2);
    expect(value(s, 'aer1_write_transaction_seconds_count', { outcome: 'rollback' })).toBe(1);
    expect(value(s, 'aer1_write_commit_seconds_count')).toBe(2);
    expect(value(s, 'aer1_write_commit_seconds_sum')).toBeCloseTo(0.0045, 6);
    expect(value(s, 'aer1_write_queue_wait_seconds_count')).toBe(3);
  });

  it('a commit group is one group: the events of all its writes, one commit, each write\'s queue wait', async () => {
    const m = new LedgerMetrics(true);
    const a = {};
    const b = {};
    const c = {};
    m.appended(a, [{ type: 'ReceiptRecorded' }]);
    m.appended(b, [{ type: 'ReceiptRecorded' }]);
    m.appended(c, [{ type: 'ReceiptRecorded' }]);
    m.writeFinished([b], false, { waited: [0.001], total: 0.001, commit: 0 }); // b rolled back to its savepoint
    m.writeFinished([a, c], true, { waited: [0.002, 0.001], total: 0.01, commit: 0.004 });
    const s = await samples(m);
    expect(value(s, 'aer1_events_appended_total', { type: 'ReceiptRecorded' })).toBe(2);
    expect(value(s, 'aer1_append_group_size_count')).toBe(1);
    expect(value(s, 'aer1_append_group_size_sum')).toBe(2);
    expect(value(s, 'aer1_append_group_size_bucket', { le: '1' })).toBe(0);
    expect(value(s, 'aer1_write_transaction_seconds_count', { outcome: 'commit' })).toBe(1);
    expect(value(s, 'aer1_write_transaction_seconds_count', { outcome: 'rollback' })).toBe(1);
    expect(value(s, 'aer1_write_queue_wait_seconds_count')).toBe(3);
  });

  it('checkpoint size, signing time and age; an older checkpoint does not move them back', async () => {
    const m = new LedgerMetrics(true);
    let s = await samples(m);
    expect(value(s, 'aer1_checkpoint_size')).toBeNaN();
    expect(value(s, 'aer1_checkpoint_age_seconds')).toBeNaN();
    const signedAt = Date.now() - 90_000;
    m.checkpointSigned(1000, signedAt);
    m.checkpointSigned(900, Date.now()); // an older checkpoint reported late
    s = await samples(m);
    expect(value(s, 'aer1_checkpoint_size')).toBe(1000);
    expect(value(s, 'aer1_checkpoint_signed_timestamp_seconds')).toBe(signedAt / 1000);
    const age = value(s, 'aer1_checkpoint_age_seconds');
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(100);
    expect(() => m.checkpointSigned(-1, Date.now())).toThrow(RangeError);
  });

  it('witness lag by witness name, bounded to MAX_WITNESS_LABELS names', async () => {
    const m = new LedgerMetrics(true);
    m.witnessCosigned('witness.example', 990, 1000, 1_700_000_000_000);
    m.witnessCosigned('other.example', 1000, 1000);
    m.witnessCosigned('late.example', 1005, 1000); // cosigned a newer one than we know: lag 0, never negative
    let s = await samples(m);
    expect(value(s, 'aer1_witness_lag_entries', { witness: 'witness.example' })).toBe(10);
    expect(value(s, 'aer1_witness_cosigned_size', { witness: 'witness.example' })).toBe(990);
    expect(value(s, 'aer1_witness_cosigned_timestamp_seconds', { witness: 'witness.example' })).toBe(1_700_000_000);
    expect(value(s, 'aer1_witness_lag_entries', { witness: 'other.example' })).toBe(0);
    expect(value(s, 'aer1_witness_lag_entries', { witness: 'late.example' })).toBe(0);
    for (let i = 0; i < MAX_WITNESS_LABELS + 5; i++) m.witnessCosigned(`w${i}`, 1, 2);
    s = await samples(m);
    const names = new Set(s.filter((x) => x.name === 'aer1_witness_lag_entries').map((x) => x.labels.witness));
    expect(names.size).toBe(MAX_WITNESS_LABELS + 1); // the first 32 names, and "other"
    expect(names.has('other')).toBe(true);
    expect(names.has(`w${MAX_WITNESS_LABELS}`)).toBe(false);
  });

  it('rate-limit refusals by limiter; chunk durations by outcome; queue depth read at each scrape', async () => {
    const m = new LedgerMetrics(true);
    m.rateLimited('public_read');
    m.rateLimited('public_read');
    m.rateLimited('verification_batches');
    m.chunkProcessed(0.3, true);
    m.chunkProcessed(0.01, false);
    let depth = { waiting: 7, active: 1 };
    m.setQueueDepthSource(async () => depth);
    let s = await samples(m);
    expect(value(s, 'aer1_rate_limit_refusals_total', { limiter: 'public_read' })).toBe(2);
    expect(value(s, 'aer1_rate_limit_refusals_total', { limiter: 'verification_batches' })).toBe(1);
    expect(value(s, 'aer1_verification_chunk_seconds_bucket', { outcome: 'ok', le: '0.25' })).toBe(0);
    expect(value(s, 'aer1_verification_chunk_seconds_bucket', { outcome: 'ok', le: '0.5' })).toBe(1);
    expect(value(s, 'aer1_verification_chunk_seconds_count', { outcome: 'error' })).toBe(1);
    expect(value(s, 'aer1_verification_queue_depth', { state: 'waiting' })).toBe(7);
    expect(value(s, 'aer1_verification_queue_depth', { state: 'active' })).toBe(1);
    depth = { waiting: 0, active: 0 };
    s = await samples(m);
    expect(value(s, 'aer1_verification_queue_depth', { state: 'waiting' })).toBe(0);
    m.setQueueDepthSource(async () => {
      throw new Error('redis down');
    });
    s = await samples(m);
    expect(has(s, 'aer1_verification_queue_depth')).toBe(false); // no sample rather than a stale one
  });

  it('disabled: records nothing', async () => {
    const m = new LedgerMetrics(false);
    m.httpRequest('GET', '/x', 200, 0.1);
    m.rateLimited('public_read');
    m.checkpointSigned(5, Date.now());
    const tx = {};
    m.appended(tx, [{ type: 'ReceiptRecorded' }]);
    m.writeFinished([tx], true, { waited: [0], total: 0, commit: 0 });
    const s = await samples(m);
    expect(value(s, 'aer1_http_requests_total', { route: '/x' })).toBe(0);
    expect(value(s, 'aer1_rate_limit_refusals_total', { limiter: 'public_read' })).toBe(0);
    expect(value(s, 'aer1_events_appended_total', { type: 'ReceiptRecorded' })).toBe(0);
    expect(value(s, 'aer1_checkpoint_size')).toBeNaN();
  });

  it('two instances keep apart registries (two apps in one process)', async () => {
    const a = new LedgerMetrics(true, { defaultMetrics: true });
    const b = new LedgerMetrics(true, { defaultMetrics: true });
    a.rateLimited('public_read');
    expect(value(await samples(a), 'aer1_rate_limit_refusals_total', { limiter: 'public_read' })).toBe(1);
    expect(value(await samples(b), 'aer1_rate_limit_refusals_total', { limiter: 'public_read' })).toBe(0);
    expect(has(await samples(a), 'process_cpu_user_seconds_total')).toBe(true);
  });
});
