// Keeps outbound webhooks off the gateway's own networks (SSRF): whoever holds an admin key picks
// the URL, so it must not reach loopback, the LAN, cloud metadata (169.254.169.254) or anything
// else that is not public. Checked twice: when the URL is registered (a 400 naming the reason), and
// at connect time through guardedLookup, because a DNS answer can change after registration.
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

// ipaddr.js range names mapped to the reasons we report. Names absent from both tables still
// block, as 'reserved': a new special range in a future ipaddr.js release should fail closed.
const PUBLIC_V4 = new Set(['unicast', 'as112', 'amt']);
const PUBLIC_V6 = new Set(['unicast', 'as112v6', 'amt']);
const REASONS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade-nat',
  private: 'private',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'site-local',
};

// Global unicast IPv6 is 2000::/3; ipaddr.js calls everything it has no name for 'unicast',
// including the deprecated IPv4-compatible ::a.b.c.d.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
// Only the well-known /96 NAT64 prefix has a fixed place for the IPv4 address; the local-use
// 64:ff9b:1::/48 is someone's internal network and stays blocked as 'reserved'.
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** Why an address must not be a webhook destination, or undefined when it is public. */
export function blockedAddress(ip: string): string | undefined {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(ip);
  } catch {
    return 'invalid';
  }
  return address.kind() === 'ipv4' ? blockedV4(address as ipaddr.IPv4) : blockedV6(address as ipaddr.IPv6);
}

function blockedV4(address: ipaddr.IPv4): string | undefined {
  const range = address.range();
  return PUBLIC_V4.has(range) ? undefined : (REASONS[range] ?? 'reserved');
}

function blockedV6(address: ipaddr.IPv6): string | undefined {
  // Addresses that carry an IPv4 address reach it (directly, or through a NAT64 or 6to4 relay),
  // so they are judged by it: ::ffff:127.0.0.1 is loopback.
  const embedded = embeddedV4(address);
  if (embedded) return blockedV4(embedded);
  const range = address.range();
  if (!PUBLIC_V6.has(range)) return REASONS[range] ?? 'reserved';
  return address.match(GLOBAL_UNICAST_V6) ? undefined : 'reserved';
}

function embeddedV4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const [, p1, p2, , , , p6, p7] = address.parts as [number, number, number, number, number, number, number, number];
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || address.match(NAT64_WELL_KNOWN)) return v4From(p6, p7);
  if (range === '6to4') return v4From(p1, p2);
  return undefined;
}

function v4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

const MAX_URL_LENGTH = 2048;

/**
 * Why a URL cannot be registered as a webhook endpoint (a message for the admin API's 400), or
 * undefined. Unless allowPrivate, the host is resolved and every address it resolves to must be
 * public: a name with one private answer among public ones is still a way in.
 */
export async function checkWebhookUrl(url: string, allowPrivate: boolean): Promise<string | undefined> {
  if (url.length > MAX_URL_LENGTH) return `The webhook URL is longer than ${MAX_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'The webhook URL is not a valid absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'The webhook URL must use http or https';
  // Credentials in a URL end up in logs and in the delivery list; the signature authenticates us.
  if (parsed.username || parsed.password) return 'The webhook URL must not contain credentials (user:password@)';
  const host = unbracketed(parsed.hostname);
  if (!host) return 'The webhook URL has no host';
  if (allowPrivate) return undefined;

  let addresses: dns.LookupAddress[];
  try {
    addresses = await new Promise((resolve, reject) => limitedLookup(host, (error, found) => (error ? reject(error) : resolve(found))));
  } catch {
    return `The webhook URL's host ${host} does not resolve`;
  }
  if (addresses.length === 0) return `The webhook URL's host ${host} does not resolve`;
  for (const { address } of addresses) {
    const reason = blockedAddress(address);
    // The address itself is not said: an admin key must not learn what internal names resolve to.
    if (reason) return `The webhook URL resolves to ${article(reason)} ${reason} address; set MODELGATE_WEBHOOK_ALLOW_PRIVATE=true to allow it`;
  }
  return undefined;
}

/**
 * Lookups run on libuv's four threads, shared with the provider calls' own lookups: a hostile DNS
 * server that never answers holds a thread until the system resolver gives up. At most
 * MAX_LOOKUPS of ours run at once (the rest wait, at most MAX_WAITING), and each answers within
 * LOOKUP_TIMEOUT_MS (its thread is counted until it truly returns).
 */
const MAX_LOOKUPS = 2;
const MAX_WAITING = 100;
export const LOOKUP_TIMEOUT_MS = 5000;
let running = 0;
/** Lookups waiting for a slot; one answered meanwhile (timed out) is skipped. */
const waiting: Array<{ start(): void; answered(): boolean }> = [];

type LookupOptions = Pick<dns.LookupOptions, 'family' | 'hints'>;

function limitedLookup(host: string, callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void, options: LookupOptions = {}): void {
  if (running >= MAX_LOOKUPS && waiting.length >= MAX_WAITING) return callback(Object.assign(new Error('too many lookups waiting'), { code: 'EBUSY' }), []);
  let answered = false;
  const answer = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    callback(error, addresses);
  };
  // The deadline counts from the call, waiting for a slot included.
  const timer = setTimeout(() => answer(Object.assign(new Error('lookup timed out'), { code: 'ETIMEOUT' }), []), LOOKUP_TIMEOUT_MS);
  timer.unref();
  const start = () => {
    running++;
    dns.lookup(host, { family: options.family, hints: options.hints, all: true }, (error, addresses) => {
      running--;
      nextWaiting();
      answer(error, addresses ?? []);
    });
  };
  if (running < MAX_LOOKUPS) start();
  else waiting.push({ start, answered: () => answered });
}

function nextWaiting(): void {
  for (let next = waiting.shift(); next; next = waiting.shift()) {
    if (next.answered()) continue;
    next.start();
    return;
  }
}

/** A URL's hostname without the brackets of an IPv6 literal, as DNS and net.isIP expect it. */
export function unbracketed(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function article(reason: string): string {
  return reason === 'unspecified' || reason === 'invalid' ? 'an' : 'a';
}

/** The error guardedLookup fails with; `reason` is blockedAddress's answer. */
export interface BlockedAddressError extends NodeJS.ErrnoException {
  code: 'EBLOCKED';
  reason: string;
}

/**
 * A drop-in for dns.lookup as http.request's `lookup` option: it resolves every address and fails
 * with code EBLOCKED if any is blocked, so the address actually connected to is the one checked
 * (no gap between a check and a second resolution for a rebinding DNS server to exploit).
 * net.connect skips `lookup` for IP literals: callers check those with blockedAddress themselves.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  limitedLookup(hostname, (error, addresses) => {
    if (error) return callback(error, '');
    const blocked = addresses.map((entry) => blockedAddress(entry.address)).find((reason) => reason !== undefined);
    if (blocked) return callback(blockedError(blocked), '');
    if (addresses.length === 0) return callback(Object.assign(new Error('no addresses'), { code: 'ENOTFOUND' }), '');
    if (options.all) return callback(null, addresses);
    const [first] = addresses as [dns.LookupAddress];
    callback(null, first.address, first.family);
  }, { family: options.family, hints: options.hints });
};

export function blockedError(reason: string): BlockedAddressError {
  return Object.assign(new Error(`address blocked: ${reason}`), { code: 'EBLOCKED' as const, reason });
}
