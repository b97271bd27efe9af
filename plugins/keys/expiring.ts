// key.expiring_soon: an active key whose expiry is within EXPIRING_WINDOW_DAYS (the window the
// metrics count) is announced once — once per key and expiry, across replicas (the shared alert
// state) and restarts; a key whose expiry moves is announced again for the new one.
import type { Logger } from 'pino';
import type { AlertStates } from '../../core/alert-states.js';
import type { Notification } from '../../core/events.js';
import { EXPIRING_WINDOW_DAYS } from '../../core/key-stats.js';
import type { KeyRows } from './key-rows.js';

const DAY_MS = 86_400_000;
/** Keys read per page; every expiring key is looked at each check. */
const PAGE = 500;
/** Announcements remembered by this process, so a key announced already costs no query a minute. */
const MAX_REMEMBERED = 100_000;

export class ExpiringKeys {
  private checking: Promise<void> | undefined;
  private readonly announced = new Set<string>();

  constructor(
    private readonly rows: KeyRows,
    private readonly states: AlertStates,
    private readonly notify: (notification: Notification) => void,
    private readonly logger: Logger,
  ) {}

  check(now = Date.now()): Promise<void> {
    this.checking ??= this.announce(now)
      .catch((error: Error) => this.logger.warn({ err: error.message }, 'keys: keys expiring soon not announced; tried again in a minute'))
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async announce(now: number): Promise<void> {
    const until = now + EXPIRING_WINDOW_DAYS * DAY_MS;
    for (let after: { expiresAt: number; id: string } | undefined; ; ) {
      const page = await this.rows.listExpiring(now, until, PAGE, after);
      for (const row of page) {
        const expiresAt = Number(row.expires_at);
        const subject = `${row.id}@${expiresAt}`;
        if (this.announced.has(subject)) continue;
        // Never resolved: the state row is the "said once" marker (an endless cool-down).
        const first = await this.states.fire('key.expiring_soon', subject, Number.MAX_SAFE_INTEGER, now);
        if (this.announced.size >= MAX_REMEMBERED) this.announced.clear();
        this.announced.add(subject);
        if (!first) continue;
        this.notify({
          type: 'key.expiring_soon',
          data: { key_id: row.id, name: row.name, expires_at: new Date(expiresAt).toISOString(), days_left: Math.max(0, Math.floor((expiresAt - now) / DAY_MS)) },
        });
      }
      if (page.length < PAGE) return;
      const last = page.at(-1)!;
      after = { expiresAt: Number(last.expires_at), id: last.id };
    }
  }
}
