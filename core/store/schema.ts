// The tables of the durable store, as the query layer (Kysely) sees them. One schema for SQLite and
// PostgreSQL: times are integer epoch milliseconds, money integer nano-dollars (BIGINT), flags 0/1.
// The migrations in migrations/ create exactly this; a change here needs a new migration.
// Each area's tables are in tables/; this file assembles them into the one schema Kysely is typed with.
import type { BudgetAlertTable, BudgetPauseTable, CircuitRollupTable, ErrorRollupTable, LedgerTable, ModelRollupTable, RollupTable } from './tables/usage.js';
import type { ApiKeyIdempotencyTable, ApiKeyTable } from './tables/keys.js';
import type { ResponseItemTable, ResponseTable } from './tables/responses.js';
import type { RequestRecordTable } from './tables/records.js';
import type { AlertStateTable, EventCounterTable, EventDeliveryAttemptTable, EventOutboxTable, WebhookEndpointTable } from './tables/events.js';
import type { ExperimentExposureTable, ExperimentFeedbackTable, ExperimentTable } from './tables/experiments.js';
import type { DashboardSessionTable } from './tables/sessions.js';

export * from './tables/usage.js';
export * from './tables/keys.js';
export * from './tables/responses.js';
export * from './tables/records.js';
export * from './tables/events.js';
export * from './tables/experiments.js';
export * from './tables/sessions.js';

/** A named lease: the replica holding it runs that background job (the retention sweeper). */
export interface LeaseTable {
  name: string;
  holder: string;
  expires_at: number;
}

export interface MigrationTable {
  name: string;
  applied_at: number;
}

export interface Tables {
  ledger: LedgerTable;
  usage_hourly: RollupTable;
  usage_daily: RollupTable;
  usage_hourly_models: ModelRollupTable;
  usage_daily_models: ModelRollupTable;
  usage_errors_hourly: ErrorRollupTable;
  circuit_openings_hourly: CircuitRollupTable;
  budget_alerts: BudgetAlertTable;
  budget_pauses: BudgetPauseTable;
  leases: LeaseTable;
  api_keys: ApiKeyTable;
  api_key_idempotency: ApiKeyIdempotencyTable;
  responses: ResponseTable;
  response_items: ResponseItemTable;
  request_records: RequestRecordTable;
  webhook_endpoints: WebhookEndpointTable;
  event_outbox: EventOutboxTable;
  event_delivery_attempts: EventDeliveryAttemptTable;
  alert_states: AlertStateTable;
  event_counters: EventCounterTable;
  experiments: ExperimentTable;
  experiment_exposures: ExperimentExposureTable;
  experiment_feedback: ExperimentFeedbackTable;
  dashboard_sessions: DashboardSessionTable;
  modelgate_migrations: MigrationTable;
}

export type RollupTableName = 'usage_hourly' | 'usage_daily';
export type ModelRollupTableName = 'usage_hourly_models' | 'usage_daily_models';
