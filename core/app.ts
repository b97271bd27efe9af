// Where the app is assembled — the only place that names plugins and providers. PIPELINE is the
// request path, in order; PROVIDERS the adapters. createApp validates every setting at boot,
// builds the plugins and returns a server ready to listen.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import type { Logger, DestinationStream } from 'pino';
import { loadConfig, ConfigError, type LoadedConfig } from './config.js';
import { serverSettings } from './server-settings.js';
import { anonymizeLogs, createLogger, linesWritten, loggingSettings, type LoggingSettings } from './logger.js';
import { LogRetention } from './log-retention.js';
import { rememberSecrets } from './redact.js';
import { catalogSettings, loadCatalog, CatalogFileError, type Catalog } from './catalog.js';
import { redisSettings, createRedis, type RedisSettings } from './redis.js';
import { storeSettings, type StoreSettings } from './store/settings.js';
import { openStore, type Store } from './store/database.js';
import { migrate } from './store/migrate.js';
import { MIGRATIONS } from './store/migrations/index.js';
import { RetentionSweeper } from './store/retention.js';
import { Forwarder } from './proxy.js';
import { HealthRegistry } from './health.js';
import { EventBus } from './events.js';
import { compileOverrides } from './overrides.js';
import { CacheStatsBoard } from './cache-stats.js';
import { KeyStatsBoard } from './key-stats.js';
import { SessionBoard } from './sessions.js';
import { compose, composeTimed, stepsFor, type Handler, type Plugin, type PluginDeps, type PluginModule, type Route } from './pipeline.js';
import { GatewayServer, listenError } from './server.js';
import { acceptedAtMost, openFilesLimit, OVERFLOW_CONNECTIONS } from './connections.js';
import { coreRoutes } from './routes.js';
import { providerRoutes } from './provider-routes.js';
import { API_VERSION, describeApi, servedDescription } from './openapi/document.js';
import { openApiRoute } from './openapi/route.js';
import { projectRoot } from './paths.js';
import type { SettingsOf, SettingsSchema } from './settings.js';
import { chatBody } from './chat-body.js';
import { CHAT_PATH, EMBEDDINGS_PATH, RESPONSES_PATH } from './api-paths.js';
import { ResponseStore, responsesSettings } from './responses/store.js';
import { responseRoutes } from './responses/routes.js';
import { recordSettings, type RecordSettings } from './records/settings.js';
import { dataProtection, RequestRecords } from './records/records.js';
import type { Anonymizer } from './anonymize.js';
import type { RequestContext } from './context.js';
import { metrics } from '../plugins/metrics.js';
import { dashboard } from '../plugins/dashboard.js';
import { ipFilter } from '../plugins/ip-filter.js';
import { keys } from '../plugins/keys.js';
import { auth } from '../plugins/auth.js';
import type { KeyStore } from './key-store.js';
import { rateLimit } from '../plugins/rate-limit.js';
import { costGuard } from '../plugins/cost-guard.js';
import { cache } from '../plugins/cache.js';
import { router } from '../plugins/router.js';
import { failover } from '../plugins/failover.js';
import { events } from '../plugins/events.js';
import { experiments } from '../plugins/experiments.js';
import { openai } from '../providers/openai/index.js';
import { anthropic } from '../providers/anthropic/index.js';
import { google } from '../providers/google/index.js';
import { cohere } from '../providers/cohere/index.js';
import { mistral } from '../providers/mistral/index.js';
import { custom } from '../providers/custom/index.js';
import type { Provider, ProviderModule } from './provider.js';

/**
 * The request path, in order. Each entry is one file; chat-body is core's own step, before the rate
 * limit because tokens per minute need its token estimate. Metrics only observes (every request).
 * Keys adds no step: it gives auth its key store (so comes first) and serves the admin API of keys.
 * Events adds none either: it delivers what the others notify, so it is created before them and
 * closed after them (nothing they say while closing is lost).
 */
export const PIPELINE: readonly PluginModule[] = [metrics, events, ipFilter, keys, dashboard, auth, chatBody, experiments, rateLimit, costGuard, cache, router, failover];

export const PROVIDERS: readonly ProviderModule[] = [openai, anthropic, google, cohere, mistral, custom];

export const CORE_SETTINGS: readonly SettingsSchema[] = [serverSettings, loggingSettings, catalogSettings, redisSettings, storeSettings, responsesSettings, recordSettings];

export function allSettings(): SettingsSchema[] {
  return [...CORE_SETTINGS, ...PIPELINE.map((p) => p.settings), ...PROVIDERS.map((p) => p.settings)];
}

export interface App {
  server: GatewayServer;
  config: LoadedConfig;
  logger: Logger;
  catalog: Catalog;
  providers: ReadonlyMap<string, Provider>;
  plugins: readonly Plugin[];
  /** Every route the server answers; GET /v1/openapi.json describes them. */
  routes: readonly Route[];
  deps: PluginDeps;
  /** Removes ledger rows, rollups and request records past their retention, in the background (started by listen()). */
  sweeper: RetentionSweeper;
  /** The one Anonymizer of the process (request records; logging uses the same), keyed from the record key material. */
  anonymizer: Anonymizer;
  /** Request records: the writer (when MODELGATE_REQUEST_RECORDS is on) and the admin routes. */
  records: RequestRecords;
  /** Starts listening; resolves with the base URL clients use (MODELGATE_BASE_URL, else the local …/v1). */
  listen(): Promise<string>;
  /** Graceful stop: in-flight requests finish (bounded), then plugins and connections close. */
  close(): Promise<void>;
}

export const VERSION = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;

export interface AppOptions {
  /** Where logs go instead of stdout (tests capture them). */
  logDestination?: DestinationStream;
  /** Key stores consulted after the bootstrap key (tests add a second tenant this way). */
  keyStores?: KeyStore[];
  /** The schema is current: the workers' supervisor migrated it before forking, so no worker races it. */
  migrated?: boolean;
}

/** Every setting, validated (ConfigError naming every bad one). */
export function loadAppConfig(env: NodeJS.ProcessEnv): LoadedConfig {
  return loadConfig(env, allSettings(), { known: { providers: PROVIDERS.map((module) => module.name) } });
}

export async function createApp(env: NodeJS.ProcessEnv, options: AppOptions = {}): Promise<App> {
  const config = loadAppConfig(env);
  const values = config.values;
  // Before anything can log or fail: every secret setting's value is masked wherever text leaves.
  rememberSecrets(allSettings(), values);
  const core = values as SettingsOf<typeof serverSettings> & SettingsOf<typeof catalogSettings>;
  // Node refuses a header timeout longer than the whole-request one; say so at boot, by name.
  if (core.MODELGATE_HEADERS_TIMEOUT > core.MODELGATE_REQUEST_TIMEOUT) {
    throw new ConfigError([`MODELGATE_HEADERS_TIMEOUT: must not exceed MODELGATE_REQUEST_TIMEOUT (${core.MODELGATE_REQUEST_TIMEOUT})`]);
  }
  const logger = createLogger(values as LoggingSettings, options.logDestination);
  for (const name of config.unknown) logger.warn({ setting: name }, 'unknown setting ignored (typo?)');
  // Client connections past half the descriptors leave too few for the provider calls they make:
  // every request then fails (EMFILE), the good ones too.
  const files = openFilesLimit();
  if (files !== undefined && acceptedAtMost(core.MODELGATE_MAX_CONNECTIONS) * 2 > files) {
    logger.warn(
      { maxConnections: core.MODELGATE_MAX_CONNECTIONS, openFilesLimit: files },
      `MODELGATE_MAX_CONNECTIONS is too high for the open-files limit (${files}): lower it below ${Math.max(1, Math.floor(files / 2) - OVERFLOW_CONNECTIONS)} or raise ulimit -n`,
    );
  }

  const providers = new Map<string, Provider>(PROVIDERS.map((module) => [module.name, module.create(values)]));
  if (![...providers.values()].some((provider) => provider.configured)) {
    const settings = PROVIDERS.map((module) => module.configuredBy);
    logger.warn({ settings }, `no provider is configured: every chat request will fail with 404 Model unavailable. Set one of ${settings.join(', ')}`);
  }
  let catalog: Catalog;
  try {
    catalog = loadCatalog({
      file: core.MODELGATE_MODEL_CATALOG,
      extra: PROVIDERS.flatMap((module) => (module.extraModels?.(values) ?? []).map((id) => ({ provider: module.name, id }))),
    });
  } catch (error) {
    if (error instanceof CatalogFileError) throw new ConfigError([`MODELGATE_MODEL_CATALOG: ${error.message}`]);
    throw error;
  }

  // What must survive is needed before anything else: a database that cannot be reached or
  // migrated stops the start (StoreError, MigrationError) before the port is taken.
  const store: Store = await openStore(values as StoreSettings & { MODELGATE_DATA_DIR: string }, logger);
  try {
    if (!options.migrated) await migrate(store, MIGRATIONS, logger);
  } catch (error) {
    await store.close();
    throw error;
  }
  logger.info({ engine: store.engine, database: store.location }, 'database ready');
  if (store.engine === 'postgres' && existsSync(join(resolve(values.MODELGATE_DATA_DIR as string), 'ledger.db'))) {
    // 0.1's embedded ledger is imported into SQLite only (migration 0004): moving to PostgreSQL at the same upgrade leaves it behind.
    logger.warn({ file: join(resolve(values.MODELGATE_DATA_DIR as string), 'ledger.db') }, "a 0.1 ledger.db is in the data directory; it is imported only into the embedded SQLite database, so its spend history is not in PostgreSQL");
  }
  let records: RequestRecords;
  let protection: ReturnType<typeof dataProtection>;
  try {
    // A keyring that does not parse, or prod with records on and no key, stops the start here.
    protection = dataProtection(values as RecordSettings, { dataDir: values.MODELGATE_DATA_DIR as string, env: config.env, logger, bootstrapKey: values.MODELGATE_API_KEY as string });
    records = new RequestRecords(store, logger, values as RecordSettings, protection);
    // Every log line from here on: bodies, error messages, the user field.
    anonymizeLogs(protection.anonymizer);
  } catch (error) {
    await store.close();
    throw error;
  }
  const sweeper = new RetentionSweeper(store, values as StoreSettings & RecordSettings, logger);
  const logging = values as LoggingSettings;
  // Rotated log files are this process's own (on its disk): each process ages out its own.
  const logRetention = logging.MODELGATE_LOG_FILE && logging.MODELGATE_LOG_ROTATION ? new LogRetention(logging.MODELGATE_LOG_FILE, logging.MODELGATE_LOG_RETENTION, logging.MODELGATE_LOG_ROTATION_COUNT, logger) : undefined;
  const responses = new ResponseStore(store, values.MODELGATE_RESPONSES_RETENTION as number, logger);

  const forwarder = new Forwarder();
  let redis: Redis | undefined;
  const deps: PluginDeps = {
    catalog,
    providers,
    forwarder,
    logger,
    health: new HealthRegistry(),
    events: new EventBus(),
    cacheStats: new CacheStatsBoard(),
    keyStats: new KeyStatsBoard(),
    sessions: new SessionBoard(),
    // Read only while serving, when `server` (built below, after the plugins) exists.
    inflight: () => server.inflightCount,
    settings: values,
    // A copy: the keys plugin adds the durable store to it.
    keyStores: [...(options.keyStores ?? [])],
    parseOverrides: compileOverrides(PIPELINE.flatMap((module) => module.overrides ?? [])),
    redis: () => (redis ??= createRedis(values as RedisSettings, logger)),
    store: () => store,
    responses,
    anonymizer: protection.anonymizer,
  };
  const plugins: Plugin[] = [];
  try {
    for (const module of PIPELINE) plugins.push(await module.create(values, deps));
  } catch (error) {
    // A plugin that refuses its settings stops the start: what was opened is closed again.
    for (const plugin of plugins.reverse()) await plugin.close?.().catch(() => undefined);
    if (redis) redis.disconnect();
    forwarder.close();
    await store.close();
    throw error;
  }

  const steps = plugins.flatMap((plugin) => (plugin.step ? [plugin.step] : []));
  // The APIs the whole pipeline serves; the chat-body step reads each one's body.
  const pipelineRoutes: Route[] = [CHAT_PATH, RESPONSES_PATH, EMBEDDINGS_PATH].map((path) => ({
    method: 'POST',
    path,
    chat: true,
    // Reached only if no step answered: the pipeline is misassembled.
    async handle() {
      throw new Error('the chat pipeline ended without an answer');
    },
  }));
  // Whether the keyed routes would let a client in (the IP filter, then its key), asked without
  // refusing: health answers everyone and shows its details only to such a client. A key store
  // that fails counts as no key — health never fails on a key.
  const admission = compose(
    steps.filter((step) => step.scope === 'public' || step.name === auth.name),
    async () => undefined,
  );
  const admits = (ctx: RequestContext) => admission(ctx).then(() => ctx.principal !== undefined, () => false);
  let closing = false;
  const routes: Route[] = [
    ...pipelineRoutes,
    ...responseRoutes(responses),
    ...records.routes,
    ...coreRoutes({ catalog, providers, version: VERSION, isShuttingDown: () => closing, admits }),
    ...providerRoutes({ catalog, providers, health: deps.health, forwarder }),
    ...plugins.flatMap((plugin) => plugin.routes ?? []),
  ];
  const description = describeApi({
    version: API_VERSION,
    overrides: PIPELINE.flatMap((module) => module.overrides ?? []),
    providers: [...providers.keys()],
    baseUrl: core.MODELGATE_BASE_URL,
  });
  routes.push(openApiRoute(() => servedDescription(description, routes)));
  const server = new GatewayServer({
    host: core.MODELGATE_HOST,
    port: core.MODELGATE_PORT,
    shutdownTimeoutMs: core.MODELGATE_SHUTDOWN_TIMEOUT,
    limits: {
      headersTimeoutMs: core.MODELGATE_HEADERS_TIMEOUT,
      requestTimeoutMs: core.MODELGATE_REQUEST_TIMEOUT,
      keepAliveTimeoutMs: core.MODELGATE_KEEP_ALIVE_TIMEOUT,
      maxConnections: core.MODELGATE_MAX_CONNECTIONS,
      maxConnectionsPerAddress: core.MODELGATE_MAX_CONNECTIONS_PER_IP,
    },
    logger,
    logging: values as LoggingSettings,
    routes,
    chainFor: (route): Handler => (values.MODELGATE_LOG_PERFORMANCE ? composeTimed : compose)(stepsFor(route, steps), route.handle),
    observers: [...plugins.filter((plugin) => plugin.observe), ...(records.observer ? [records.observer] : [])],
  });

  return {
    server,
    config,
    logger,
    catalog,
    providers,
    plugins,
    routes,
    deps,
    sweeper,
    anonymizer: protection.anonymizer,
    records,
    async listen() {
      const address = await server.listen().catch((error: unknown) => {
        throw listenError(error, core.MODELGATE_HOST, core.MODELGATE_PORT);
      });
      sweeper.start();
      responses.start();
      logRetention?.start();
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      const local = host === '0.0.0.0' || host === '[::]' ? 'localhost' : host;
      const url = `http://${local}:${address.port}/v1`;
      // MODELGATE_BASE_URL is how clients reach us (behind a load balancer, TLS, a path prefix).
      const baseUrl = core.MODELGATE_BASE_URL?.replace(/\/+$/, '') ?? url;
      logger.info({ url, baseUrl, providers: [...providers.values()].filter((p) => p.configured).map((p) => p.name) }, 'modelgate listening');
      return baseUrl;
    },
    async close() {
      closing = true;
      await server.shutdown();
      for (const plugin of [...plugins].reverse()) await plugin.close?.();
      forwarder.close();
      if (redis) redis.disconnect();
      await records.close();
      await sweeper.close();
      logRetention?.close();
      await responses.close();
      await store.close();
      await linesWritten();
      logger.flush?.();
    },
  };
}
