/**
 * Sending a webhook without reaching inside the network: every address a
 * receiver's host resolves to is checked (a host with any loopback,
 * link-local, private, shared, multicast or reserved address is refused), the
 * connection is made to an address that was checked (no second lookup a DNS
 * rebinding could change), and redirects are never followed (a 3xx is a
 * failed attempt), so a redirect cannot lead a delivery to an internal
 * address. WEBHOOK_ALLOW_PRIVATE=true lifts the address rule (tests, private
 * deployments).
 */
import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
  ['100::', 64], // discard
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 literal (a zone `%...` dropped, a dotted IPv4 tail read), or null. */
function hextets(ip: string): number[] | null {
  const bare = ip.replace(/%.*$/, '');
  let text: string;
  try {
    text = new URL(`http://[${bare}]/`).hostname.slice(1, -1); // canonical: compressed, hex tail
  } catch {
    return null;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const a = head ? head.split(':') : [];
  const b = tail ? tail.split(':') : [];
  const groups = tail === null ? a : [...a, ...Array<string>(8 - a.length - b.length).fill('0'), ...b];
  if (groups.length !== 8) return null;
  return groups.map((g) => parseInt(g, 16));
}

const v4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address stands for, `'refuse'` for IPv6 forms
 * that reach IPv4 space with no checkable address, or null (plain IPv6):
 * IPv4-mapped `::ffff:0:0/96` and IPv4-translated `::ffff:0:0:0/96` (RFC 2765),
 * NAT64 `64:ff9b::/96` (RFC 6052: the address is checked, so DNS64 keeps
 * working) give their IPv4 address; IPv4-compatible `::/96` (deprecated, RFC 4291),
 * 6to4 `2002::/16` (RFC 7526: any relay), Teredo `2001::/32` and local-use
 * NAT64 `64:ff9b:1::/48` (RFC 8215) are refused whole.
 */
function embeddedIpv4(h: number[]): string | 'refuse' | null {
  const zeros = (from: number, to: number): boolean => h.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && h[5] === 0xffff) return v4Of(h[6], h[7]); // ::ffff:a.b.c.d
  if (zeros(0, 4) && h[4] === 0xffff && h[5] === 0) return v4Of(h[6], h[7]); // ::ffff:0:a.b.c.d
  if (h[0] === 0x64 && h[1] === 0xff9b && zeros(2, 6)) return v4Of(h[6], h[7]); // 64:ff9b::a.b.c.d
  if (zeros(0, 6)) return 'refuse'; // ::a.b.c.d (also :: and ::1)
  if (h[0] === 0x2002) return 'refuse';
  if (h[0] === 0x2001 && h[1] === 0) return 'refuse';
  if (h[0] === 0x64 && h[1] === 0xff9b && h[2] === 1) return 'refuse';
  return null;
}

/**
 * True when `ip` (a literal address) is loopback, link-local, private or
 * otherwise not a public unicast address, in any of its IPv6 spellings
 * (see {@link embeddedIpv4}); anything not an address is refused.
 */
export function isNonPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return BLOCKED.check(ip, 'ipv4');
  if (family === 6) {
    const h = hextets(ip);
    if (h === null) return true;
    const v4 = embeddedIpv4(h);
    if (v4 === 'refuse') return true;
    if (v4 !== null) return BLOCKED.check(v4, 'ipv4');
    return BLOCKED.check(h.map((x) => x.toString(16)).join(':'), 'ipv6');
  }
  return true; // not an address at all: never connect to it
}

/** A receiver's host resolves to an address deliveries may not reach (or does not resolve). */
export class AddressRefusedError extends Error {
  constructor(
    message: string,
    readonly addresses: string[],
  ) {
    super(message);
  }
}

/**
 * Every address `host` resolves to (a literal address: itself), checked:
 * throws {@link AddressRefusedError} when any is not public (unless
 * `allowPrivate`) or when the host does not resolve.
 */
export async function resolveAllowed(host: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  let addrs: LookupAddress[];
  if (isIP(bare) !== 0) addrs = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addrs = await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(bare, { all: true, verbatim: true }, (e, a) => (e ? reject(e) : resolve(a))));
    } catch (e) {
      throw new AddressRefusedError(`host ${JSON.stringify(bare)} does not resolve (${e instanceof Error ? e.message : String(e)})`, []);
    }
  }
  if (addrs.length === 0) throw new AddressRefusedError(`host ${JSON.stringify(bare)} has no address`, []);
  if (!allowPrivate) {
    const bad = addrs.filter((a) => isNonPublicAddress(a.address)).map((a) => a.address);
    if (bad.length > 0) throw new AddressRefusedError(`host ${JSON.stringify(bare)} resolves to ${bad.join(', ')}: a loopback, link-local, private or reserved address; webhooks are not sent inside the network (WEBHOOK_ALLOW_PRIVATE=true allows it)`, bad);
  }
  return addrs;
}

/** The outcome of one delivery attempt. */
export type AttemptResult = { ok: true; status: number } | { ok: false; status: number | null; reason: string };

/** Bytes of a receiver's answer body read at most (the rest is not waited for). */
export const ANSWER_BODY_MAX = 64 * 1024;

/**
 * POST `body` to `url` once, to an address {@link resolveAllowed} accepted.
 * `timeoutMs` is an overall deadline: the lookup, connecting, sending, the
 * answer's headers and its body (read up to {@link ANSWER_BODY_MAX} bytes,
 * then dropped) all within it (an answer cut at the deadline after its
 * status arrived counts by that status), so a receiver that drips its answer a byte at
 * a time cannot hold the attempt longer. `signal` aborts the attempt at once
 * (shutdown). 2xx is success; a 3xx (not followed), another status, a refused
 * address, the deadline, an abort or a network error is a failure with its
 * reason (`aborted: true` for an abort, which is not the receiver's fault).
 */
export async function postOnce(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { allowPrivate: boolean; timeoutMs: number; signal?: AbortSignal },
): Promise<AttemptResult & { aborted?: true }> {
  const u = new URL(url);
  const started = Date.now();
  let addrs: LookupAddress[];
  try {
    addrs = await resolveAllowed(u.hostname, opts.allowPrivate);
  } catch (e) {
    return { ok: false, status: null, reason: e instanceof Error ? e.message : String(e) };
  }
  if (opts.signal?.aborted) return { ok: false, status: null, reason: 'aborted at shutdown', aborted: true };
  const pinned = addrs[0];
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<AttemptResult & { aborted?: true }>((resolve) => {
    let status: number | null = null;
    let answered: AttemptResult | null = null;
    let settled = false;
    const finish = (r: AttemptResult & { aborted?: true }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      opts.signal?.removeEventListener('abort', onAbort);
      req.destroy(); // nothing more is read or waited for
      resolve(r);
    };
    const byStatus = (s: number, location: string | undefined): AttemptResult => {
      if (s >= 200 && s < 300) return { ok: true, status: s };
      if (s >= 300 && s < 400) return { ok: false, status: s, reason: `redirect to ${JSON.stringify(location ?? '')} not followed` };
      return { ok: false, status: s, reason: `answered ${s}` };
    };
    const req = send(
      u,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), 'User-Agent': 'aer1-ledger-webhooks', ...headers },
        // Connect to the address that was checked, not to a second lookup's answer.
        lookup: (_host, options, cb) => {
          if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: LookupAddress[]) => void)(null, [pinned]);
          else cb(null, pinned.address, pinned.family);
        },
      },
      (res) => {
        status = res.statusCode ?? 0;
        const result = byStatus(status, res.headers.location);
        answered = result;
        let read = 0;
        res.on('data', (c: Buffer) => {
          read += c.length;
          if (read >= ANSWER_BODY_MAX) finish(result); // enough: the rest is not read
        });
        res.on('end', () => finish(result));
        res.on('error', () => finish({ ok: false, status, reason: 'the answer broke off' }));
      },
    );
    // Past the deadline: an answer whose status arrived counts by its status (its body is not needed); none is a failure.
    const deadline = setTimeout(() => finish(answered ?? { ok: false, status, reason: `no answer within ${opts.timeoutMs} ms` }), Math.max(0, opts.timeoutMs - (Date.now() - started)));
    const onAbort = (): void => finish({ ok: false, status, reason: 'aborted at shutdown', aborted: true });
    opts.signal?.addEventListener('abort', onAbort);
    req.on('error', (e) => finish({ ok: false, status, reason: e.message }));
    req.end(body);
  });
}
