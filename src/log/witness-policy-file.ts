/**
 * WITNESS_POLICY_FILE: the witnesses this log asks and the quorum their
 * cosignatures must reach, in the Sigsum policy format
 * (git.glasklar.is/sigsum/core/sigsum-go, doc/policy.md; pkg/policy/config.go):
 *
 *   log <pubkey> [<url>]                       optional: this log's key
 *   witness <name> <pubkey> <url>              a witness the ledger asks
 *   group <name> <k|any|all> <member>...       holds when k of its members hold
 *   quorum <name|none>                         exactly one
 *
 * Items are separated by spaces or tabs; `#` starts a comment to the end of
 * the line; a name is defined on a line before any line that uses it; a name
 * is a member of one group at most (the rule is a tree); `none` is the
 * predefined empty group (no cosignature needed).
 *
 * Where this ledger differs from Sigsum, and why:
 * - `<pubkey>` is a C2SP vkey (`<key name>+<hex id>+<base64>`, c2sp.org/signed-note),
 *   type 0x04 for a witness (c2sp.org/tlog-cosignature): a cosignature line is
 *   found by its key name and ID, which a raw hex key does not carry. A raw
 *   hex key is refused with that reason.
 * - A witness's `<url>` is required: the ledger POSTs `<url>/add-checkpoint` to it.
 * - A witness that is not in the quorum's tree is optional: it is asked
 *   like every witness, its cosignatures are stored and served, but it
 *   never counts toward the quorum (Sigsum's meaning of a listed witness
 *   the quorum does not name).
 */
import { NoteVerifier, parseVerifierKey, SIG_COSIGNATURE_V1, SIG_ED25519 } from '../core/tlog';
import { QuorumRule, QUORUM_NONE } from '../core/tlog/quorum';

/** A malformed policy file: `line` is the 1-based line the message is about (0: the file as a whole). */
export class WitnessPolicyFileError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(line > 0 ? `line ${line}: ${reason}` : reason);
  }
}

/** One `witness` line. */
export interface PolicyWitness {
  /** The name the file gives it (used only inside the file, and in /health). */
  readonly name: string;
  readonly vkey: string;
  readonly verifier: NoteVerifier;
  /** Base URL; add-checkpoint is POSTed to `<url>/add-checkpoint`. */
  readonly url: string;
  /** The line that defines it. */
  readonly line: number;
}

/** A parsed policy file. */
export interface WitnessPolicyFile {
  /** The `log` line's key, when there is one: the ledger checks at start that it is its own key. */
  readonly log: { readonly key: string; readonly line: number } | null;
  /** Every witness, in file order. */
  readonly witnesses: readonly PolicyWitness[];
  /** The quorum's rule (a tree over the witnesses' vkeys). */
  readonly quorum: QuorumRule;
}

const URL_RE = /^https?:\/\/[^\s/]+(\/\S*)?$/;
const HEX_KEY = /^[0-9a-fA-F]{64}$/;

/**
 * Parse a policy file's text (see the module comment). Throws
 * {@link WitnessPolicyFileError} naming the line for: a control character,
 * an unknown keyword, a wrong number of items, a key that is not a vkey of
 * the right type, a URL that is not http(s), a name defined twice or used
 * before its definition, a member of two groups (or `none` as a member), a
 * threshold outside 1..n, the same witness key twice, a second `log` or
 * `quorum` line; and (line 0) no `quorum` line.
 */
export function parseWitnessPolicyFile(text: string): WitnessPolicyFile {
  const names = new Map<string, QuorumRule>([['none', QUORUM_NONE]]);
  /** Names already used as a group member (or `none`): the group that took it. */
  const used = new Map<string, string | null>([['none', null]]);
  const keys = new Map<string, string>();
  const witnesses: PolicyWitness[] = [];
  let log: WitnessPolicyFile['log'] = null;
  let quorum: QuorumRule | null = null;
  let quorumLine = 0;
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  lines.forEach((raw, i) => {
    const n = i + 1;
    const fail = (why: string): never => {
      throw new WitnessPolicyFileError(n, why);
    };
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const bad = /(?!\t)\p{Cc}/u.exec(line);
    if (bad) fail(`control character 0x${bad[0].charCodeAt(0).toString(16).padStart(2, '0')}`);
    const hash = line.indexOf('#');
    const items = (hash >= 0 ? line.slice(0, hash) : line).split(/[ \t]+/).filter((s) => s.length > 0);
    if (items.length === 0) return;
    const [keyword, ...args] = items;
    const defineName = (name: string): void => {
      if (names.has(name)) fail(`the name ${JSON.stringify(name)} is already defined`);
    };
    switch (keyword) {
      case 'log': {
        if (args.length < 1 || args.length > 2) fail('a log line is "log <pubkey> [<url>]"');
        if (log) fail(`a second log line (the first is line ${log.line}): the policy is this ledger's, which is one log`);
        const key = args[0];
        if (!HEX_KEY.test(key)) {
          let v: NoteVerifier;
          try {
            v = parseVerifierKey(key);
          } catch (e) {
            return fail(`the log key is neither a vkey nor 64 hex digits: ${(e as Error).message}`);
          }
          if (v.type !== SIG_ED25519) fail('the log key is not an Ed25519 log key (type 0x01)');
        }
        if (args[1] !== undefined && !URL_RE.test(args[1])) fail('the log URL must be an http(s) URL');
        log = { key, line: n };
        return;
      }
      case 'witness': {
        if (args.length !== 3) fail(args.length === 2 ? 'the witness has no URL: the ledger asks each witness at <url>/add-checkpoint, so "witness <name> <vkey> <url>"' : 'a witness line is "witness <name> <vkey> <url>"');
        const [name, key, url] = args;
        defineName(name);
        if (HEX_KEY.test(key)) fail('a raw hex key cannot name a cosignature line: write the witness\'s vkey (<key name>+<hex id>+<base64>, type 0x04; "aer1 witness create-key" prints it, public witnesses publish it on their about page)');
        let verifier: NoteVerifier;
        try {
          verifier = parseVerifierKey(key);
        } catch (e) {
          return fail(`the witness key does not parse: ${(e as Error).message}`);
        }
        if (verifier.type !== SIG_COSIGNATURE_V1) fail('the witness key is not a cosignature key (type 0x04, c2sp.org/tlog-cosignature)');
        const id = `${verifier.name}+${verifier.keyId}`;
        const other = keys.get(id);
        if (other !== undefined) fail(`the witness key of ${JSON.stringify(name)} is already the key of ${JSON.stringify(other)}`);
        if (!URL_RE.test(url)) fail('the witness URL must be an http(s) URL');
        keys.set(id, name);
        names.set(name, { kind: 'witness', name, key });
        witnesses.push({ name, vkey: key, verifier, url: url.replace(/\/+$/, ''), line: n });
        return;
      }
      case 'group': {
        if (args.length < 3) fail('a group line is "group <name> <k|any|all> <member>..." with at least one member');
        const [name, threshold, ...memberNames] = args;
        defineName(name);
        const size = memberNames.length;
        const k = threshold === 'any' ? 1 : threshold === 'all' ? size : /^[0-9]+$/.test(threshold) ? Number(threshold) : NaN;
        if (Number.isNaN(k)) fail(`the threshold ${JSON.stringify(threshold)} is not a number, "any" or "all"`);
        if (k < 1 || k > size) fail(`the threshold ${k} is outside 1..${size} (the group has ${size} member${size === 1 ? '' : 's'})`);
        const members = memberNames.map((m) => {
          if (used.has(m)) {
            const parent = used.get(m);
            return fail(parent ? `${JSON.stringify(m)} is already a member of ${JSON.stringify(parent)}` : `${JSON.stringify(m)} cannot be a group member`);
          }
          const rule = names.get(m);
          if (!rule) return fail(`${JSON.stringify(m)} is not defined on a line before this one`);
          used.set(m, name);
          return rule;
        });
        names.set(name, { kind: 'group', name, k, members });
        return;
      }
      case 'quorum': {
        if (args.length !== 1) fail('a quorum line is "quorum <name>" (a witness, a group, or none)');
        if (quorum) fail(`a second quorum line (the first is line ${quorumLine})`);
        const rule = names.get(args[0]);
        if (!rule) fail(`${JSON.stringify(args[0])} is not defined on a line before this one`);
        quorum = rule as QuorumRule;
        quorumLine = n;
        return;
      }
      default:
        fail(`unknown keyword ${JSON.stringify(keyword.slice(0, 40))} (log, witness, group, quorum)`);
    }
  });
  if (!quorum) throw new WitnessPolicyFileError(0, 'no quorum line ("quorum <name>", or "quorum none" for no cosignature)');
  return { log, witnesses, quorum };
}
