// Every migration, in the order they apply. Append only: a migration that has been released is
// never edited or reordered (a replica records its name when applied); see docs/storage.md for the
// expand/contract rule that keeps rolling upgrades safe.
import type { Migration } from '../migrate.js';
import { ledger } from './0001_ledger.js';
import { budgetState } from './0002_budget_state.js';
import { leases } from './0003_leases.js';
import { importV0Ledger } from './0004_import_v0_ledger.js';
import { apiKeys } from './0005_api_keys.js';
import { usageByKey } from './0006_usage_by_key.js';
import { responses } from './0007_responses.js';
import { analytics } from './0008_analytics.js';
import { requestRecords } from './0009_request_records.js';
import { events } from './0010_events.js';
import { experiments } from './0011_experiments.js';
import { dashboardSessions } from './0012_dashboard_sessions.js';

export const MIGRATIONS: readonly Migration[] = [ledger, budgetState, leases, importV0Ledger, apiKeys, usageByKey, responses, analytics, requestRecords, events, experiments, dashboardSessions];
