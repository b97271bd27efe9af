// Schemas of the dashboard's sign-in (plugins/dashboard/session-routes.ts).
import type { Schema } from '../types.js';

export const dashboardSchemas = {
  SignIn: {
    type: 'object',
    required: ['key'],
    additionalProperties: true,
    properties: { key: { type: 'string', minLength: 1, maxLength: 512, description: 'An API key of the gateway (uc_…): the bootstrap key, or a key of the admin API.' } },
  },
  DashboardSession: {
    type: 'object',
    required: ['object', 'key_id', 'name', 'admin', 'tenant', 'csrf_token', 'expires_at'],
    additionalProperties: false,
    properties: {
      object: { type: 'string', enum: ['dashboard_session'] },
      key_id: { type: 'string', description: 'The key signed in with: `bootstrap` for MODELGATE_API_KEY.' },
      name: { type: ['string', 'null'], description: "The key's name; null for the bootstrap key." },
      admin: { type: 'boolean', description: 'Whether the session may use the admin API (an admin key, not in its grace period after a regenerate).' },
      tenant: { type: 'string', description: "The key's owner: whose usage it sees." },
      csrf_token: { type: 'string', description: 'Send it as x-csrf-token with every change (POST, PATCH, PUT, DELETE) made with the session.' },
      expires_at: { type: 'string', format: 'date-time', description: 'When the session ends (MODELGATE_DASHBOARD_SESSION_TTL after sign-in, never after the key does).' },
    },
  },
  SessionEnded: {
    type: 'object',
    required: ['object', 'deleted'],
    additionalProperties: false,
    properties: { object: { type: 'string', enum: ['dashboard_session'] }, deleted: { type: 'boolean', description: 'Whether a live session was ended.' } },
  },
} satisfies Record<string, Schema>;
