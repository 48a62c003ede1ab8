/**
 * The words a coverage report leads with (issue 27, "Verdicts at the top"),
 * shared by the page (src/coverage/coverage.page.ts) and the PDF
 * (src/coverage/coverage.pdf.ts) so both say the same: the findings named
 * in words, and, for an action whose required outcome is not confirmed, the
 * status it is shown with instead of a plain "covered".
 *
 * Pure. Every text returned is plain (not escaped, invisible characters not
 * yet made visible): the page escapes it, the PDF passes it through
 * `pdfText`.
 */
import type { ActionOutcome, OutcomeStatus } from './outcomes';
import type { ActionReport, CoverageReportContent, Finding } from './types';

/** Findings named in the headline at most; the rest are counted ("and N more"). */
export const HEADLINE_FINDINGS = 3;

/** The words of an outcome status that is not a confirmation. */
export const OUTCOME_WORDS: Readonly<Record<Exclude<OutcomeStatus, 'confirmed'>, string>> = {
  contradicted: 'CONTRADICTED',
  unconfirmed: 'UNCONFIRMED',
  wrong_system: 'WRONG SYSTEM',
};

/** Words for finding codes whose upper-cased code reads badly; any other code is written out (`a_b` as "A B"). */
const CODE_WORDS: Readonly<Record<string, string>> = {
  outcome_contradicted: 'outcome CONTRADICTED',
  outcome_unconfirmed: 'outcome UNCONFIRMED',
  outcome_wrong_system: 'outcome from the WRONG SYSTEM',
};

/**
 * The outcome status an action is shown with instead of `covered`: its
 * outcome status when the plan requires an outcome and it is not
 * `confirmed`; null when the action is not covered (its own status is
 * already a finding) or its outcome is confirmed or not required.
 */
export function outcomeOverride(a: Pick<ActionReport, 'status' | 'outcome'>): Exclude<OutcomeStatus, 'confirmed'> | null {
  const s = a.outcome?.status;
  return a.status === 'covered' && s !== undefined && s !== 'confirmed' ? s : null;
}

/**
 * Why an outcome is not confirmed, in a few words: what the deciding outcome
 * reports (`PAYMENTS reports reversed`), or that none came from the required
 * system and effect. Null for a confirmed outcome.
 */
export function outcomeReason(o: ActionOutcome): string | null {
  if (o.status === 'confirmed') return null;
  const ev = o.evidence.find((e) => e.status === o.status);
  if (!ev) return `no ${o.required.effect} from ${o.required.from_system}`;
  if (o.status === 'wrong_system') {
    const systems = [...new Set(ev.outcomes.map((x) => x.system))];
    return `only from ${systems.join(', ') || 'another system'}, not from ${o.required.from_system}`;
  }
  const deciding = ev.deciding_outcome === null ? undefined : ev.outcomes.find((x) => x.outcome_id === ev.deciding_outcome);
  if (!deciding) return `no ${o.required.effect} from ${o.required.from_system}`;
  if (ev.late) return `${deciding.system} reports ${deciding.result}, late`;
  return `${deciding.system} reports ${deciding.result}`;
}

/** One finding in a few words: what (upper case) and where (action, seq or commitment), with the outcome's reason when it has one. */
export function findingPhrase(f: Finding, r: Pick<CoverageReportContent, 'actions'>): string {
  const what = CODE_WORDS[f.code] ?? f.code.replace(/_/g, ' ').toUpperCase();
  if (f.action_id !== undefined) {
    const a = r.actions.find((x) => x.action_id === f.action_id);
    const why = f.code.startsWith('outcome_') && a?.outcome ? outcomeReason(a.outcome) : null;
    return `${f.action_id}: ${what}${why ? ` (${why})` : ''}`;
  }
  if (f.seq !== undefined) return `${what} at seq ${f.seq}`;
  if (f.commitment !== undefined) return `${what} (commitment ${f.commitment})`;
  return what;
}

/**
 * The coverage line of the headline: "Coverage: FULL (n/n expected actions
 * covered)", or the number of findings, the first {@link HEADLINE_FINDINGS}
 * named and the rest counted, then the ratio. `percent` adds the percentage
 * to the ratio of a report with findings (the PDF).
 */
export function coverageHeadline(r: Pick<CoverageReportContent, 'result' | 'findings' | 'coverage' | 'actions'>, opts: { percent?: boolean } = {}): string {
  if (r.result === 'full_coverage' && r.findings.length === 0) return `Coverage: FULL (${r.coverage.ratio} expected actions covered)`;
  const ratio = `${r.coverage.ratio} expected actions covered${opts.percent ? `, ${r.coverage.percent}%` : ''}`;
  const n = r.findings.length;
  const named = r.findings.slice(0, HEADLINE_FINDINGS).map((f) => findingPhrase(f, r));
  const rest = n > HEADLINE_FINDINGS ? `; and ${n - HEADLINE_FINDINGS} more` : '';
  return `Coverage: ${n} FINDING${n === 1 ? '' : 'S'}: ${named.join('; ')}${rest} (${ratio})`;
}

/**
 * Why a report judged no endpoint commitment (`commitment.state` `absent`):
 * "none recorded", or, when commitments were recorded and erased since
 * (issue 29, findings `evidence_erased` naming a commitment), how many.
 */
export function absentWords(r: Pick<CoverageReportContent, 'findings'>): string {
  const n = r.findings.filter((f) => f.code === 'evidence_erased' && f.commitment !== undefined).length;
  return n === 0 ? 'none recorded' : `${n} recorded and erased since, not judged`;
}
