// Events that must arrive (plugins/events/): endpoints, the outbox and its attempts, and the
// shared state that makes an alert fire once across replicas.
// Part of the store's schema (../schema.ts): epoch-ms times, nano-dollar money, 0/1 flags.

/** A webhook endpoint (plugins/events/endpoints.ts): registered through the admin API, or from settings. */
export interface WebhookEndpointTable {
  id: string;
  url: string;
  description: string | null;
  /** JSON array of event types, `["*"]` for every type. */
  event_types: string;
  enabled: number;
  /** Why it was disabled (`gone`: the receiver answered 410); null when enabled or disabled by an admin. */
  disabled_reason: string | null;
  /** `api`, or `settings` (MODELGATE_WEBHOOK_URL, rewritten at every boot). */
  source: string;
  created_at: number;
  updated_at: number;
}

/** One delivery of one event to one destination, from enqueued to delivered or given up. */
export interface EventOutboxTable {
  /** The delivery's id (`dlv_…`). */
  id: string;
  /** The event's id (`msg_…`): the `webhook-id` of every attempt and replay. */
  event_id: string;
  event_type: string;
  /** webhook | email | chat | alert_webhook */
  channel: string;
  endpoint_id: string | null;
  /** The message as sent: JSON `{type, timestamp, data}`. */
  payload: string;
  created_at: number;
  /** pending | delivered | failed | skipped */
  status: string;
  attempts: number;
  next_attempt_at: number;
  /** Claimed by `lease_holder` until then (0: free); a replica that dies lets the claim lapse. */
  lease_until: number;
  lease_holder: string | null;
  last_status_code: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
  delivered_at: number | null;
  /** The delivery this one replays, if any. */
  replay_of: string | null;
}

export interface EventDeliveryAttemptTable {
  id: string;
  delivery_id: string;
  at: number;
  ok: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

/** An alert's state, shared by replicas (core/alert-states.ts): `firing` or `resolved`. */
export interface AlertStateTable {
  kind: string;
  subject: string;
  state: string;
  fired_at: number;
  changed_at: number;
}

/** Occurrences summed per kind, subject and window (epoch ms of its start) by every replica. */
export interface EventCounterTable {
  kind: string;
  subject: string;
  window: number;
  count: number;
  emitted: number;
}
