// What an alert says, in words an operator reads on a phone: a title, one sentence, the facts as
// label/value pairs and what happens next. Email and chat render the same description, so both
// channels always agree; an event type this file does not know still gets its data listed.
import type { EventDescription, EventMessage } from './types.js';
import { budgetDescriptions } from './alert-budget-text.js';
import { duration, elapsed, instant, lastWindow, MISSING, num, percent, text } from './alert-format.js';

export type { EventDescription } from './types.js';

type Describe = (message: EventMessage) => EventDescription;


function recovery(ms: unknown): string {
  const value = num(ms);
  return value === undefined ? MISSING : duration(value / 1000);
}

/** "my-bot (k_1)" or "k_1" when the key has no name. */
function keyName(data: Record<string, unknown>): string {
  return data.name ? `${text(data.name)} (${text(data.key_id)})` : text(data.key_id);
}

function keyFacts(data: Record<string, unknown>): Array<[string, string]> {
  return [
    ['Key', text(data.key_id)],
    ['Name', text(data.name)],
    ['Expires at', data.expires_at ? instant(data.expires_at) : 'never'],
    ['By key', text(data.by_key_id)],
  ];
}

function keyChange(verb: string, next: string): Describe {
  return ({ data }) => ({
    title: `API key ${verb}: ${keyName(data)}`,
    summary: `API key ${keyName(data)} was ${verb}${data.by_key_id ? ` by key ${text(data.by_key_id)}` : ''}.`,
    facts: keyFacts(data),
    next,
  });
}

function errorRateFacts(data: Record<string, unknown>): Array<[string, string]> {
  return [
    ['Error rate', percent(data.error_rate)],
    ['Threshold', percent(data.threshold)],
    ['Errors', `${text(data.errors)} of ${text(data.requests)} requests`],
    ['Window', lastWindow(data.window_seconds)],
  ];
}

const EXPERIMENT_ENDINGS: Record<string, string> = { duration: 'its planned duration ended', decision: 'its decision was reached', stopped: 'it was stopped', promoted: 'an arm was promoted' };

const descriptions: Record<string, Describe> = {
  ...budgetDescriptions,
  'provider.circuit_opened': ({ data }) => ({
    title: `Circuit opened for ${text(data.provider)}`,
    summary: `Requests to provider ${text(data.provider)} failed repeatedly, so the gateway stopped sending to it.`,
    facts: [['Provider', text(data.provider)], ['Retry after', recovery(data.recovery_ms)]],
    next: `Requests go to fallback models where configured; one trial request is let through after ${recovery(data.recovery_ms)}.`,
  }),
  'provider.circuit_closed': ({ data }) => ({
    title: `Circuit closed for ${text(data.provider)}`,
    summary: `Provider ${text(data.provider)} answers again.`,
    facts: [['Provider', text(data.provider)]],
    next: 'Requests go to this provider again; nothing to do.',
  }),
  'provider.down': ({ data }) => ({
    title: `Provider ${text(data.provider)} is down`,
    summary: `${text(data.failures)} requests to ${text(data.provider)} failed within ${lastWindow(data.window_seconds)}.`,
    facts: [
      ['Provider', text(data.provider)],
      ['Failures', text(data.failures)],
      ['Window', lastWindow(data.window_seconds)],
      ['Last error', text(data.last_error)],
    ],
    next: `Requests fail over to other providers where configured; an alert follows when ${text(data.provider)} recovers.`,
  }),
  'provider.recovered': ({ data, timestamp }) => {
    const downFor = elapsed(data.down_since, timestamp);
    return {
      title: `Provider ${text(data.provider)} recovered`,
      summary: `${text(data.provider)} answers again after being down since ${instant(data.down_since)}${downFor ? ` (${downFor})` : ''}.`,
      facts: [['Provider', text(data.provider)], ['Down since', instant(data.down_since)], ['Down for', downFor ?? MISSING]],
      next: 'Requests go to this provider again; nothing to do.',
    };
  },
  'error_rate.high': ({ data }) => ({
    title: `Error rate ${percent(data.error_rate)} over ${lastWindow(data.window_seconds)}`,
    summary: `${text(data.errors)} of ${text(data.requests)} requests failed over ${lastWindow(data.window_seconds)}, above the ${percent(data.threshold)} threshold.`,
    facts: errorRateFacts(data),
    next: `An alert follows when the error rate falls below ${percent(data.threshold)}.`,
  }),
  'error_rate.resolved': ({ data }) => ({
    title: `Error rate back to ${percent(data.error_rate)} over ${lastWindow(data.window_seconds)}`,
    summary: `${text(data.errors)} of ${text(data.requests)} requests failed over ${lastWindow(data.window_seconds)}, below the ${percent(data.threshold)} threshold.`,
    facts: errorRateFacts(data),
    next: 'Nothing to do.',
  }),
  'rate_limit.hit': ({ data }) => ({
    title: `Rate limit hit by key ${text(data.key_id)}: ${text(data.refused)} requests refused`,
    summary: `Key ${text(data.key_id)} went over its rate limit in the minute from ${instant(data.minute)}; ${text(data.refused)} requests were refused with HTTP 429.`,
    facts: [['Key', text(data.key_id)], ['Minute', instant(data.minute)], ['Refused', text(data.refused)]],
    next: "Requests are accepted again in the next minute; raise the key's limit if this traffic is expected.",
  }),
  'key.created': keyChange('created', 'The key can be used now.'),
  'key.regenerated': keyChange('regenerated', 'The old secret no longer works; clients need the new one.'),
  'key.revoked': keyChange('revoked', 'Requests with this key are refused from now on.'),
  'key.expiring_soon': ({ data }) => ({
    title: `API key ${keyName(data)} expires in ${text(data.days_left)} day${data.days_left === 1 ? '' : 's'}`,
    summary: `API key ${keyName(data)} expires at ${instant(data.expires_at)}.`,
    facts: [['Key', text(data.key_id)], ['Name', text(data.name)], ['Expires at', instant(data.expires_at)], ['Days left', text(data.days_left)]],
    next: `Regenerate or replace the key before ${instant(data.expires_at)}; after that its requests are refused.`,
  }),
  'experiment.finished': ({ data }) => ({
    title: `Experiment ${text(data.name)} finished${data.winner ? `: winner ${text(data.winner)}` : ''}`,
    summary: `Experiment ${text(data.name)} (${text(data.experiment_id)}) finished because ${EXPERIMENT_ENDINGS[String(data.reason)] ?? text(data.reason)}.`,
    facts: [['Experiment', text(data.experiment_id)], ['Name', text(data.name)], ['Reason', text(data.reason)], ['Winner', text(data.winner)]],
    next:
      data.reason === 'promoted' && data.winner
        ? `Variant ${text(data.winner)} now serves the experiment's traffic.`
        : 'Traffic is no longer split; review the results and promote a variant if one should stay.',
  }),
};

function generic({ type, data }: EventMessage): EventDescription {
  return {
    title: `Event ${type}`,
    summary: `modelgate reported an event of type ${type}.`,
    facts: Object.entries(data ?? {}).map(([label, value]) => [label, text(value)]),
    next: 'No follow-up is known for this event type.',
  };
}

export function describeEvent(message: EventMessage): EventDescription {
  const describe = Object.hasOwn(descriptions, message.type) ? descriptions[message.type]! : generic;
  return describe({ ...message, data: message.data ?? {} });
}
