// The rate-limit rules of plugins/rate/limits.ts run in Redis as one Lua script per request, so N
// replicas read and write the same counters atomically and enforce one limit. Time is Redis's own
// clock (TIME), so replicas with skewed clocks still agree. Keys carry the API key as a hash tag:
// a key's two entries live in one slot under Redis Cluster.
import type { Redis } from 'ioredis';
import { HOUR_MS, MINUTE_MS, type Decision, type Limits, type RateStore } from './limits.js';

// KEYS: state hash {requests, tokens, at}, sorted set of admitted request times.
// ARGV: rpm, rph, burst, tpm, tokens to take, request id.
const CONSUME = `
local rpm, rph, burst, tpm = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'requests', 'tokens', 'at')
local requests, tokens, at = tonumber(s[1]) or burst, tonumber(s[2]) or tpm, tonumber(s[3]) or now
local elapsed = math.max(0, now - at)
requests = math.min(burst, requests + elapsed * rpm / ${MINUTE_MS})
tokens = math.min(tpm, tokens + elapsed * tpm / ${MINUTE_MS})
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ${HOUR_MS})
local used = redis.call('ZCARD', KEYS[2])
local waits = {0, 0, 0}
if requests < 1 then waits[1] = (1 - requests) * ${MINUTE_MS} / rpm end
if used >= rph then
  local oldest = redis.call('ZRANGE', KEYS[2], used - rph, used - rph, 'WITHSCORES')
  waits[2] = tonumber(oldest[2]) + ${HOUR_MS} - now
end
if cost > tpm then waits[3] = -1 elseif cost > tokens then waits[3] = (cost - tokens) * ${MINUTE_MS} / tpm end
local refused, wait = 0, 0
for i = 1, 3 do
  if waits[i] == -1 then refused, wait = i, -1; break end
  if waits[i] > wait then refused, wait = i, waits[i] end
end
if refused == 0 then
  requests = requests - 1
  tokens = tokens - cost
  redis.call('ZADD', KEYS[2], now, now .. ':' .. ARGV[6])
  used = used + 1
end
redis.call('HSET', KEYS[1], 'requests', tostring(requests), 'tokens', tostring(tokens), 'at', now)
local ttl = math.ceil(math.max(${HOUR_MS}, burst * ${MINUTE_MS} / rpm, ${MINUTE_MS}))
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ${HOUR_MS})
local keep = rph - math.min(burst, rph)
local blocking = 0
if used > keep then blocking = tonumber(redis.call('ZRANGE', KEYS[2], used - keep - 1, used - keep - 1, 'WITHSCORES')[2]) + ${HOUR_MS} - now end
local resetRequests = math.max((burst - requests) * ${MINUTE_MS} / rpm, blocking)
return {refused, math.ceil(wait), math.max(0, math.min(math.floor(requests), rph - used)), math.ceil(resetRequests),
  math.max(0, math.floor(tokens)), math.ceil((tpm - tokens) * ${MINUTE_MS} / tpm)}
`;

// KEYS: state hash. ARGV: rpm, burst, tpm, delta. Both buckets are brought to `now` (they share
// `at`), then the tokens bucket takes the correction.
const ADJUST = `
local rpm, burst, tpm, delta = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'requests', 'tokens', 'at')
if not s[3] then return 0 end
local elapsed = math.max(0, now - tonumber(s[3]))
local requests = math.min(burst, tonumber(s[1]) + elapsed * rpm / ${MINUTE_MS})
local tokens = math.min(tpm, tonumber(s[2]) + elapsed * tpm / ${MINUTE_MS})
redis.call('HSET', KEYS[1], 'requests', tostring(requests), 'tokens', tostring(math.min(tpm, tokens - delta)), 'at', now)
return 1
`;

type Scripted = Redis & {
  modelgateRateConsume(state: string, log: string, ...args: Array<string | number>): Promise<number[]>;
  modelgateRateAdjust(state: string, ...args: Array<string | number>): Promise<number>;
};

const REFUSED_BY: Array<Decision['refusedBy']> = [undefined, 'requests', 'hour', 'tokens'];

export class RedisRateStore implements RateStore {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly limits: Limits,
  ) {
    redis.defineCommand('modelgateRateConsume', { numberOfKeys: 2, lua: CONSUME });
    redis.defineCommand('modelgateRateAdjust', { numberOfKeys: 1, lua: ADJUST });
    this.redis = redis as Scripted;
  }

  async consume(key: string, tokens: number, requestId: string): Promise<Decision> {
    const { rpm, rph, burst, tpm } = this.limits;
    const [refused, wait, remainingRequests, resetRequestsMs, remainingTokens, resetTokensMs] = await this.redis.modelgateRateConsume(
      `rl:{${key}}:state`,
      `rl:{${key}}:log`,
      rpm,
      rph,
      burst,
      tpm,
      tokens,
      requestId,
    );
    return {
      admitted: refused === 0,
      refusedBy: REFUSED_BY[refused!],
      retryAfterMs: wait === -1 ? Infinity : wait!,
      remainingRequests: remainingRequests!,
      resetRequestsMs: resetRequestsMs!,
      remainingTokens: remainingTokens!,
      resetTokensMs: resetTokensMs!,
    };
  }

  async adjust(key: string, delta: number): Promise<void> {
    const { rpm, burst, tpm } = this.limits;
    await this.redis.modelgateRateAdjust(`rl:{${key}}:state`, rpm, burst, tpm, delta);
  }
}
