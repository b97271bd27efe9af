// IP filter: refuses (403) requests from MODELGATE_BLOCKED_IPS, and with
// MODELGATE_IP_WHITELISTING_ENABLED every address outside MODELGATE_ALLOWED_IPS. The client is the
// TCP peer, or the address a MODELGATE_TRUSTED_PROXIES proxy reports in X-Forwarded-For. It runs
// first, before auth, on every route, /metrics included; only /v1/health stays open (load balancers).
import ipaddr from 'ipaddr.js';
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { ConfigError } from '../core/config.js';
import { GatewayError } from '../core/errors.js';
import type { PluginModule } from '../core/pipeline.js';
import type { RequestContext } from '../core/context.js';

const settings = defineSettings({
  MODELGATE_IP_WHITELISTING_ENABLED: {
    type: 'boolean',
    default: false,
    variants: ['prod'],
    description: 'Only clients in MODELGATE_ALLOWED_IPS may use keyed /v1 routes; everyone else gets 403.',
  },
  MODELGATE_ALLOWED_IPS: {
    type: 'array',
    default: [],
    check: badRanges,
    description: 'Comma-separated IPv4/IPv6 addresses or CIDR ranges allowed when whitelisting is on (IPv4-mapped IPv6 clients match their IPv4 entry).',
  },
  MODELGATE_BLOCKED_IPS: {
    type: 'array',
    default: [],
    check: badRanges,
    description: 'Comma-separated IPv4/IPv6 addresses or CIDR ranges always refused (403), whitelisting on or off.',
  },
  MODELGATE_TRUSTED_PROXIES: {
    type: 'array',
    default: [],
    check: badRanges,
    description:
      'Comma-separated addresses or CIDR ranges of reverse proxies whose X-Forwarded-For is believed. Empty (the default): the header is ignored and the TCP peer is the client.',
  },
});

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/** Parses `10.0.0.1`, `10.0.0.0/8`, `2001:db8::/32`, `::ffff:10.0.0.1`; undefined if invalid. */
export function parseRange(entry: string): Range | undefined {
  const [address, bits, ...rest] = entry.split('/');
  if (rest.length > 0 || address === undefined) return undefined;
  const parsed = parseAddress(address);
  if (!parsed) return undefined;
  const max = parsed.kind() === 'ipv4' ? 32 : 128;
  // A mapped IPv6 entry was turned into IPv4 by parseAddress; its prefix loses the 96 mapped bits.
  const mapped = parsed.kind() === 'ipv4' && address.includes(':');
  if (bits === undefined) return [parsed, max];
  if (!/^\d{1,3}$/.test(bits)) return undefined;
  const prefix = Number(bits) - (mapped ? 96 : 0);
  return prefix >= 0 && prefix <= max ? [parsed, prefix] : undefined;
}

/** Strict parsing (four-part decimal IPv4 only); IPv4-mapped IPv6 becomes its IPv4 address. */
export function parseAddress(text: string): Address | undefined {
  const value = text.trim();
  if (ipaddr.IPv4.isValidFourPartDecimal(value)) return ipaddr.IPv4.parse(value);
  if (!ipaddr.IPv6.isValid(value)) return undefined;
  const v6 = ipaddr.IPv6.parse(value);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

function inAny(address: Address, ranges: readonly Range[]): boolean {
  return ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

/** The entries of a list that are not an address or range: reported at boot with every other bad setting. */
function badRanges(entries: readonly string[]): string[] {
  return entries.filter((entry) => !parseRange(entry)).map((entry) => `"${entry}" is not an IP address or CIDR range`);
}

/** A list the config loader checked (badRanges); a bad entry here means a caller skipped it. */
function parseList(name: string, entries: readonly string[]): Range[] {
  const problems = badRanges(entries);
  if (problems.length > 0) throw new ConfigError(problems.map((problem) => `${name}: ${problem}`));
  return entries.map((entry) => parseRange(entry)!);
}

/**
 * The client's address. From a trusted proxy, X-Forwarded-For is read right to left, skipping
 * trusted proxies: the first address not trusted is the client (left of it, anyone could have
 * written anything). Undefined when a hop we would have to believe is not an address.
 */
export function clientAddress(peer: string, forwardedFor: string | string[] | undefined, trusted: readonly Range[]): Address | undefined {
  let client = parseAddress(peer);
  if (!client || trusted.length === 0 || !inAny(client, trusted) || forwardedFor === undefined) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((hop) => hop.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    client = parseAddress(hops[i]!);
    if (!client) return undefined;
    if (!inAny(client, trusted)) return client;
  }
  return client;
}

export const ipFilter: PluginModule<typeof settings> = {
  name: 'ip-filter',
  settings,
  create(values, deps) {
    const s = values as SettingsOf<typeof settings>;
    const allowed = parseList('MODELGATE_ALLOWED_IPS', s.MODELGATE_ALLOWED_IPS);
    const blocked = parseList('MODELGATE_BLOCKED_IPS', s.MODELGATE_BLOCKED_IPS);
    const trusted = parseList('MODELGATE_TRUSTED_PROXIES', s.MODELGATE_TRUSTED_PROXIES);
    const whitelisting = s.MODELGATE_IP_WHITELISTING_ENABLED;
    if (whitelisting && allowed.length === 0) {
      deps.logger.warn(
        { settings: ['MODELGATE_IP_WHITELISTING_ENABLED', 'MODELGATE_ALLOWED_IPS'] },
        'IP whitelisting is on and MODELGATE_ALLOWED_IPS is empty: every request that needs a key is refused with 403',
      );
    }
    // Nothing to check: no step at all, so the request path pays nothing.
    if (!whitelisting && blocked.length === 0 && trusted.length === 0) return { name: 'ip-filter' };

    // The server logs the refusal (MODELGATE_LOG_ERRORS) with the client's address and why.
    const refuse = (_ctx: RequestContext, why: string) => new GatewayError('ip_forbidden', { cause: why });
    return {
      name: 'ip-filter',
      step: {
        name: 'ip-filter',
        scope: 'public',
        async handle(ctx, next) {
          const client = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.headers['x-forwarded-for'], trusted);
          if (!client) throw refuse(ctx, 'unreadable X-Forwarded-For from a trusted proxy');
          ctx.clientIp = client.toString();
          if (inAny(client, blocked)) throw refuse(ctx, 'blocked');
          if (whitelisting && !inAny(client, allowed)) throw refuse(ctx, 'not in MODELGATE_ALLOWED_IPS');
          return next();
        },
      },
    };
  },
};
