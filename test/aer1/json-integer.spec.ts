/**
 * Reading 9's "JSON integer" decided by the text (honest answers issue: a
 * commitment with `"entry_count": 7.0` or `7e0` was accepted as 7).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkCommitment, verifyCommitment, verifyTimeline } from '../../src/core/aer1';
import { commitmentAsWritten, commitmentTextProblems, commitmentValueAsWritten } from '../../src/core/aer1/commitment-text';
import { isIntegerMember, isIntegerToken, memberText, writtenIntegerProblems } from '../../src/core/aer1/json-integer';

const example = (name: string): string => readFileSync(join(__dirname, '../../examples', name), 'utf8');

describe('json-integer: the text of a member', () => {
  it('integer tokens are RFC 8259 ints: no fraction, no exponent, no leading zero, no plus', () => {
    for (const t of ['0', '7', '-0', '-12', '1234567890123456789012']) expect(isIntegerToken(t)).toBe(true);
    for (const t of ['7.0', '7e0', '7E0', '70e-1', '0.0', '-0.0', '07', '+7', '7.', '', ' 7']) expect(isIntegerToken(t)).toBe(false);
  });

  it('finds the top-level member, not a nested one of the same name, through strings that look like JSON', () => {
    const text = ' {"note": "\\"entry_count\\": 1.0 }", "w": {"entry_count": 2.0, "x": [{"entry_count": 3e0}]}, "entry_count" : 7 ,"z":[1,{"a":"}"}]}\n';
    expect(JSON.parse(text).entry_count).toBe(7);
    expect(memberText(text, ['entry_count'])).toBe('7');
    expect(memberText(text, ['w', 'entry_count'])).toBe('2.0');
    expect(memberText(text, ['w', 'x'])).toBe('[{"entry_count": 3e0}]');
    expect(memberText(text, ['z'])).toBe('[1,{"a":"}"}]');
    expect(memberText(text, [])).toBe(text.trim());
    expect(isIntegerMember(text, ['entry_count'])).toBe(true);
    expect(isIntegerMember(text, ['w', 'entry_count'])).toBe(false);
  });

  it('compares names after unescaping; the last of two equal names counts, as in JSON.parse', () => {
    expect(memberText('{"entry\\u005fcount": 7e0}', ['entry_count'])).toBe('7e0');
    expect(memberText('{"entry_count": 7, "entry_count": 7.0}', ['entry_count'])).toBe('7.0');
    expect(memberText('{"entry_count": 7.0, "entry_count": 7}', ['entry_count'])).toBe('7');
  });

  it('answers null, never throws, when the member is absent, not a number, or the path is not objects', () => {
    expect(memberText('{}', ['entry_count'])).toBeNull();
    expect(memberText('[{"entry_count": 1}]', ['entry_count'])).toBeNull();
    expect(memberText('{"a": 1}', ['a', 'b'])).toBeNull();
    expect(memberText('{"a": 1', ['a'])).toBeNull();
    expect(memberText('{"a" 1}', ['a'])).toBeNull();
    expect(memberText('', ['a'])).toBeNull();
    expect(isIntegerMember('{"entry_count": "7"}', ['entry_count'])).toBeNull();
    expect(isIntegerMember('{"entry_count": null}', ['entry_count'])).toBeNull();
    const deep = `{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}, "entry_count": 1.0}`;
    expect(memberText(deep, ['entry_count'])).toBe('1.0');
  });

  it('reports only what the parsed value hides: integral values written with a fraction or an exponent', () => {
    expect(writtenIntegerProblems('{"entry_count": 7.0}', [], 'entry_count')).toEqual(['entry_count must be written as a JSON integer (no fraction, no exponent), got 7.0']);
    expect(writtenIntegerProblems('{"entry_count": 7e0}', [], 'entry_count')).toHaveLength(1);
    expect(writtenIntegerProblems('{"entry_count": 70E-1}', [], 'entry_count')).toHaveLength(1);
    // Left to the value check (it reports them already): not integral, negative, not a number, absent.
    for (const v of ['7', '3.5', '-1.0', '"7"', '1e400', 'null']) expect(writtenIntegerProblems(`{"entry_count": ${v}}`, [], 'entry_count')).toEqual([]);
    expect(writtenIntegerProblems('{}', [], 'entry_count')).toEqual([]);
  });
});

describe('commitment-text: reading 9 by the text', () => {
  const timelineText = example('timeline-eight.json');
  const timeline = verifyTimeline(JSON.parse(timelineText));
  const good = example('commitment-eight.json');

  it('the example commitment binds its timeline, whatever white space it has', () => {
    const r = commitmentAsWritten(checkCommitment(timeline, JSON.parse(good)), good);
    expect([r.verdict, r.binding, r.reasons]).toEqual(['valid', true, []]);
    expect(commitmentTextProblems(good)).toEqual([]);
  });

  it.each(['8.0', '8e0', '0.8e1'])('entry_count %s is invalid_commitment, not binding, the commitment kept as written (was: valid, binding)', (written) => {
    const text = good.replace('"entry_count": 8', `"entry_count": ${written}`);
    const value = JSON.parse(text);
    expect(value.entry_count).toBe(8);
    expect(checkCommitment(timeline, value).binding).toBe(true); // what the parsed value alone says
    const r = commitmentAsWritten(checkCommitment(timeline, value), text);
    expect([r.verdict, r.binding, r.reasons]).toEqual(['invalid', false, ['invalid_commitment']]);
    expect(r.checks.find((c) => c.name === 'commitment.format')).toEqual({ name: 'commitment.format', ok: false, detail: `entry_count must be written as a JSON integer (no fraction, no exponent), got ${written}` });
    expect(r.checks.map((c) => c.name)).toEqual(['timeline', 'commitment.format']);
    expect(r.commitment).toEqual(value);
    expect(r.witness).toEqual({ witness: 'witness.example', retrieved_from: 'https://witness.example/jobs/job-eight', retrieved_at: '2026-10-02T08:05:00Z' });
  });

  it('finds the commitment inside an envelope or a {timeline, commitment} document', () => {
    const envelope = `{"witness": "w.example", "commitment": ${good.replace('"entry_count": 8', '"entry_count": 8.0')}}`;
    expect(commitmentTextProblems(envelope)).toEqual([]);
    expect(commitmentTextProblems(envelope, ['commitment'])).toHaveLength(1);
    const doc = `{"commitment": ${good.replace('"entry_count": 8', '"entry_count": 8e0')}, "timeline": ${timelineText}}`;
    const r = commitmentAsWritten(verifyCommitment(JSON.parse(doc)), doc, ['commitment']);
    expect([r.verdict, r.reasons]).toEqual(['invalid', ['invalid_commitment']]);
  });

  it('for value-only checkers: entry_count replaced by its text when it is not written as an integer', () => {
    const text = good.replace('"entry_count": 8', '"entry_count": 8.0');
    const v = commitmentValueAsWritten(JSON.parse(text), text) as Record<string, unknown>;
    expect(v.entry_count).toBe('8.0');
    expect(checkCommitment(timeline, v).reasons).toEqual(['invalid_commitment']);
    const same = JSON.parse(good);
    expect(commitmentValueAsWritten(same, good)).toBe(same);
  });
});
