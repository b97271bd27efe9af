// The plugin pipeline: one explicit ordered array, composed once at startup into a chain where each
// step may answer (short-circuit) or call `next()` and see the outcome when it returns. A step that
// applies only to chat completions says so; other /v1 routes get the chain of the remaining steps
// ending in their route handler. Observers see every finished request, refused ones included.
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { RequestContext } from './context.js';
import type { SettingsSchema } from './settings.js';
import type { Catalog } from './catalog.js';
import type { Forwarder } from './proxy.js';
import type { HealthRegistry } from './health.js';
import type { EventBus } from './events.js';
import type { CacheStatsBoard } from './cache-stats.js';
import type { KeyStatsBoard } from './key-stats.js';
import type { Provider } from './provider.js';
import type { KeyStore } from './key-store.js';
import type { SessionBoard } from './sessions.js';
import type { OverrideParser, OverrideSpec } from './overrides.js';
import type { Store } from './store/database.js';
import type { ResponseStore } from './responses/store.js';
import type { Anonymizer } from './anonymize.js';

export type Next = () => Promise<void>;

export interface Step {
  readonly name: string;
  /**
   * Which routes pass through it. `chat`: only POST /v1/chat/completions. `all` (default): every
   * route that needs a key. `public`: also the routes that need none (e.g. /metrics), except those
   * marked `open`.
   */
  readonly scope?: 'public' | 'all' | 'chat';
  handle(ctx: RequestContext, next: Next): Promise<void>;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  /**
   * `/v1/providers/{provider}/test` style; segments in braces become ctx.params, percent-decoded.
   * A last `{name+}` takes the rest of the path, slashes included (`/v1/models/{model+}`).
   */
  path: string;
  /** No key needed: only steps of scope `public` run (e.g. the IP filter). */
  public?: boolean;
  /** Not even those: reachable from anywhere (the health check load balancers probe). */
  open?: boolean;
  /** The chat completion route: every step runs, the chat-only ones included. */
  chat?: boolean;
  handle(ctx: RequestContext): Promise<void>;
}

/** What the app hands every plugin factory; each takes what it needs. */
export interface PluginDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, Provider>;
  forwarder: Forwarder;
  logger: Logger;
  /** Live provider health: failover writes it, the router, endpoints and metrics read it. */
  health: HealthRegistry;
  events: EventBus;
  /** The response cache's size and evictions: the cache provides them, the metrics read them. */
  cacheStats: CacheStatsBoard;
  /** Keys expiring soon: the keys plugin provides the count, the metrics read it. */
  keyStats: KeyStatsBoard;
  /** Requests being handled right now, the one asking included. */
  inflight(): number;
  /** Every validated setting, for plugins that share a setting declared elsewhere. */
  settings: Readonly<Record<string, unknown>>;
  /** The shared Redis connection, created on first use. */
  redis(): Redis;
  /** The durable store (SQLite or PostgreSQL), opened and migrated before any plugin is created. */
  store(): Store;
  /** Dashboard sessions: the keys plugin provides them, the auth step accepts their cookie. */
  sessions: SessionBoard;
  /** Key stores consulted after the bootstrap key (tests' extra keys, then the keys plugin's durable store, which it adds). */
  keyStores: KeyStore[];
  /** Stored responses of POST /v1/responses (read by the chat-body step for previous_response_id). */
  responses: ResponseStore;
  /** The one Anonymizer of the process (core/records/records.ts dataProtection): pseudonyms for whatever a plugin keeps about a request. */
  anonymizer: Anonymizer;
  /** Reads the per-request overrides every plugin declared (used by the chat-body step). */
  parseOverrides: OverrideParser;
}

/** What a plugin module exports: its settings schema and a factory. */
export interface PluginModule<S extends SettingsSchema = SettingsSchema, D = PluginDeps> {
  readonly name: string;
  readonly settings: S;
  /** The per-request override objects this plugin accepts (body `modelgate.<name>` and headers). */
  readonly overrides?: readonly OverrideSpec[];
  create(settings: Readonly<Record<string, unknown>>, deps: D): Plugin | Promise<Plugin>;
}

export interface Plugin {
  readonly name: string;
  /** Its place in the request path; absent for plugins that only observe or serve routes. */
  readonly step?: Step;
  readonly routes?: Route[];
  /** Called once per finished request (after the response ended), in pipeline order. */
  observe?(ctx: RequestContext): void;
  /** Called once when the process shuts down, after in-flight requests finished. */
  close?(): Promise<void>;
}

export type Handler = (ctx: RequestContext) => Promise<void>;

/**
 * The steps a route's request walks through before its handler, in pipeline order: every step for
 * chat completions; the steps not limited to chat for other keyed routes; the `public` ones for
 * routes that need no key; none for `open` routes.
 */
export function stepsFor(route: Route, steps: readonly Step[]): readonly Step[] {
  if (route.open) return [];
  if (route.public) return steps.filter((step) => step.scope === 'public');
  if (route.chat) return steps;
  return steps.filter((step) => step.scope !== 'chat');
}

/** Composes steps into one handler: step[0] runs first, `terminal` runs when the last calls next(). */
export function compose(steps: readonly Step[], terminal: Handler): Handler {
  return function run(ctx) {
    const dispatch = (i: number): Promise<void> => {
      if (i === steps.length) return terminal(ctx);
      let called = false;
      return steps[i]!.handle(ctx, () => {
        if (called) return Promise.reject(new Error(`${steps[i]!.name} called next() twice`));
        called = true;
        return dispatch(i + 1);
      });
    };
    return dispatch(0);
  };
}

/**
 * `compose` that also records each step's own time on `ctx.stagesMs` (ms inside the step, not in
 * the steps after it; the step that calls the upstream includes the upstream's time) and the
 * terminal handler's as `handler`. Used only with MODELGATE_LOG_PERFORMANCE: the plain chain reads
 * no clock.
 */
export function composeTimed(steps: readonly Step[], terminal: Handler): Handler {
  return function run(ctx) {
    const stages: Record<string, number> = (ctx.stagesMs ??= {});
    const dispatch = async (i: number): Promise<void> => {
      const started = performance.now();
      let inner = 0;
      const name = i === steps.length ? 'handler' : steps[i]!.name;
      // Keyed in the order steps start, so the line reads in pipeline order.
      stages[name] ??= 0;
      try {
        if (i === steps.length) return await terminal(ctx);
        let called = false;
        return await steps[i]!.handle(ctx, async () => {
          if (called) throw new Error(`${name} called next() twice`);
          called = true;
          const nextStarted = performance.now();
          try {
            return await dispatch(i + 1);
          } finally {
            inner += performance.now() - nextStarted;
          }
        });
      } finally {
        stages[name] = (stages[name] ?? 0) + performance.now() - started - inner;
      }
    };
    return dispatch(0);
  };
}
