// The webhook admin API's records (core/openapi/schemas/webhooks.ts), the event types the gateway
// sends (docs/events.md), and the alert settings (GET /v1/admin/alerts), read defensively: that
// answer is newer than this page may be.

export interface WebhookEndpoint {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  source: 'api' | 'settings';
  created_at: string;
  updated_at: string;
}

export interface Attempt {
  at: string;
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface Delivery {
  id: string;
  object: 'webhook_delivery';
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed' | 'skipped';
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
  last_status_code: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
  replay_of: string | null;
  attempt_log: Attempt[];
}

export interface Page<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface AlertSettings {
  object?: string;
  enabled?: boolean;
  cooldown_seconds?: number;
  rules?: { type?: string; enabled?: boolean; threshold?: number; action?: string; [field: string]: unknown }[];
  channels?: { type?: string; enabled?: boolean; target?: string | null; [field: string]: unknown }[];
  recent?: { id?: string; type?: string; timestamp?: string; data?: unknown; channels?: string[] }[];
  [field: string]: unknown;
}

/** docs/events.md's table: every type an endpoint may take (test/dashboard/event-types.test.ts keeps it the gateway's). */
export const EVENT_TYPES = [
  'budget.threshold_reached',
  'budget.threshold_resolved',
  'budget.exceeded',
  'budget.paused',
  'budget.resumed',
  'provider.circuit_opened',
  'provider.circuit_closed',
  'provider.down',
  'provider.recovered',
  'error_rate.high',
  'error_rate.resolved',
  'rate_limit.hit',
  'key.created',
  'key.regenerated',
  'key.revoked',
  'key.expiring_soon',
  'experiment.finished',
];

export const endpointName = (endpoint: WebhookEndpoint) => endpoint.description || endpoint.url;
