/**
 * WITNESSES / WITNESS_QUORUM and TSA_URL / TSA_CERTS parsing (issue 15):
 * what starts and what stops the process, with the variable named.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/configuration';
import { generateSignerKey, SIG_COSIGNATURE_V1 } from '../../src/core/tlog';
import { parseTsaSettings, parseWitnessPolicy } from '../../src/log/witness-config';
import { tempDir } from '../witness/helpers';

const w1 = generateSignerKey('w1.example', SIG_COSIGNATURE_V1).verifierKey;
const w2 = generateSignerKey('w2.example', SIG_COSIGNATURE_V1).verifierKey;
const logKey = generateSignerKey('log.example').verifierKey;
const list = (...ws: { url: string; vkey: string }[]) => JSON.stringify(ws);

describe('WITNESSES and WITNESS_QUORUM', () => {
  it('none: no witnessing', () => {
    expect(parseWitnessPolicy(undefined, undefined)).toEqual({ witnesses: [], quorum: 0 });
    expect(parseWitnessPolicy('  ', undefined)).toEqual({ witnesses: [], quorum: 0 });
    expect(parseWitnessPolicy('[]', undefined)).toEqual({ witnesses: [], quorum: 0 });
  });

  it('k defaults to n; a given k is kept; trailing slashes are dropped', () => {
    const p = parseWitnessPolicy(list({ url: 'http://a:1/', vkey: w1 }, { url: 'https://b.example/w', vkey: w2 }), undefined);
    expect([p.quorum, p.witnesses.map((w) => [w.url, w.verifier.name])]).toEqual([2, [['http://a:1', 'w1.example'], ['https://b.example/w', 'w2.example']]]);
    expect(parseWitnessPolicy(list({ url: 'http://a:1', vkey: w1 }, { url: 'http://b:2', vkey: w2 }), 1).quorum).toBe(1);
  });

  it.each([
    ['{"url":1}', undefined, /WITNESSES must be a JSON array/],
    ['[', undefined, /WITNESSES is not JSON/],
    [list({ url: 'ftp://a', vkey: w1 }), undefined, /WITNESSES\[0\]\.url must be an http\(s\) URL/],
    [list({ url: 'http://a:1', vkey: 'nope' }), undefined, /WITNESSES\[0\]\.vkey does not parse/],
    [list({ url: 'http://a:1', vkey: logKey }), undefined, /not a witness key \(type 0x04/],
    [list({ url: 'http://a:1', vkey: w1 }, { url: 'http://b:1', vkey: w1 }), undefined, /same witness key twice/],
    [list({ url: 'http://a:1', vkey: w1 }), 2, /WITNESS_QUORUM \(2\) exceeds the number of WITNESSES \(1\)/],
    [list({ url: 'http://a:1', vkey: w1 }), 0, /WITNESS_QUORUM must be a positive integer/],
    [undefined, 1, /WITNESS_QUORUM is set but WITNESSES is not/],
  ] as [string | undefined, number | undefined, RegExp][])('refuses %s (k %s)', (ws, k, why) => {
    expect(() => parseWitnessPolicy(ws, k)).toThrow(why);
  });

  it('stops the configuration with the reason', () => {
    expect(() => validateConfig({ WITNESSES: list({ url: 'http://a:1', vkey: w1 }), WITNESS_QUORUM: '3' })).toThrow(/invalid configuration: WITNESS_QUORUM \(3\) exceeds/);
    expect(validateConfig({ WITNESSES: list({ url: 'http://a:1', vkey: w1 }) }).WITNESSES).toContain('w1.example');
  });
});

describe('TSA_URL, TSA_CERTS and TSA_INTERVAL_MS', () => {
  const tmp = tempDir('aer1-tsa-config-');
  afterAll(() => tmp.cleanup());

  it('none: no anchoring; both together; the interval defaults to 60000', () => {
    expect(parseTsaSettings(undefined, undefined, 60_000)).toBeNull();
    expect(() => parseTsaSettings('http://tsa', undefined, 0)).toThrow(/TSA_URL is set but TSA_CERTS/);
    expect(() => parseTsaSettings(undefined, '/x.pem', 0)).toThrow(/TSA_CERTS is set but TSA_URL is not/);
    expect(() => parseTsaSettings('http://tsa', join(tmp.path, 'missing.pem'), 0)).toThrow(/TSA_CERTS .* cannot be read/);
    const junk = join(tmp.path, 'junk.pem');
    writeFileSync(junk, 'not a certificate');
    expect(() => parseTsaSettings('http://tsa', junk, 0)).toThrow(/TSA_CERTS .*no PEM CERTIFICATE block/);
    expect(validateConfig({}).TSA_INTERVAL_MS).toBe(60_000);
    expect(validateConfig({ TSA_INTERVAL_MS: '0' }).TSA_INTERVAL_MS).toBe(0);
    expect(() => validateConfig({ TSA_URL: 'http://tsa' })).toThrow(/invalid configuration: TSA_URL is set but TSA_CERTS/);
  });
});
