// REDIS_COMMAND_TIMEOUT, measured on Redis rather than on our own event loop. ioredis's own timeout
// is a plain timer: when the loop is busy (200 large requests being parsed), the timer fires in the
// loop's timers phase, before the poll phase that would have read a reply already waiting in the
// socket — and a healthy Redis is declared dead (503 "Budget store unavailable"). Here a command
// times out only when its reply has had a chance to be read, and the time the loop was stalled past
// the deadline is added to it.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

const require = createRequire(import.meta.url);

type Command = Parameters<Redis['sendCommand']>[0];

/** Lateness of a timer below this is ordinary scheduling jitter, not a stalled loop. */
const JITTER_MS = 5;

/** However late the loop runs, a command that has no answer after this many timeouts has failed. */
const MAX_WAIT_FACTOR = 10;

let loopAware: ReturnType<typeof defineLoopAware> | undefined;

/**
 * The class of ioredis's Redis with the command timeout above, in place of its `commandTimeout`
 * option, and with the commands of one turn of the event loop written to the socket together.
 * ioredis is loaded by the first call (a gateway without Redis does not load it at start: ~50 ms).
 */
export function loopAwareRedis() {
  return (loopAware ??= defineLoopAware((require('ioredis') as typeof import('ioredis')).Redis));
}

function defineLoopAware(Redis: typeof import('ioredis').Redis) {
  return class LoopAwareRedis extends Redis {
    /** ms; 0 turns the timeout off. */
    commandTimeoutMs = 0;
    private corked = false;
    /** Commands written into the corked socket: their timeouts start when it is uncorked. */
    private unsent: Command[] = [];

    override sendCommand(command: Command, ...rest: unknown[]): unknown {
      // ioredis writes each command to the socket at once: a system call per command, the largest
      // single cost of the Redis store (7–8 commands per request). The socket is corked at the first
      // command and uncorked in this loop iteration's check phase (setImmediate), after the poll phase
      // has handled every event that was ready — other requests' bodies, Redis replies — so the
      // commands all of them issued leave in one write (measured: ~500 → ~420 µs of CPU per request on
      // the Redis store, docs/benchmarks.md). Unlike ioredis's auto-pipelining, nothing waits for an
      // earlier batch's replies: a command is on the wire by the next check phase (one issued in a
      // check phase, after the uncork, by the following one), with no timer in between. Its timeout
      // starts when it is written: a callback that holds the loop after issuing a command holds the
      // command too, and that wait is the gateway's, not Redis's.
      const socket = this.stream;
      if (!this.corked && this.status === 'ready' && socket?.writable) {
        this.corked = true;
        socket.cork();
        setImmediate(() => {
          this.corked = false;
          socket.uncork();
          const written = this.unsent;
          this.unsent = [];
          // A connection lost meanwhile has rejected them (no retries per request): nothing to time.
          if (this.status !== 'ready') return;
          for (const sent of written) if (!sent.isResolved) watch(sent, this.commandTimeoutMs);
        });
      }
      // Only a command ioredis sends waits for a reply: one it refuses at once (no connection, no
      // offline queue) is settled already, and a timer would hold it for the whole timeout.
      const sending = this.status === 'ready' || this.status === 'connect';
      const sent = (super.sendCommand as (command: Command, ...rest: unknown[]) => unknown)(command, ...rest);
      if (this.commandTimeoutMs > 0 && sending && !command.isResolved) {
        if (this.corked) this.unsent.push(command);
        else watch(command, this.commandTimeoutMs);
      }
      return sent;
    }
  }
}

/** ioredis clears this timer of a command when the command settles (Command#_clearTimers; private in its types). */
interface CommandTimer {
  _commandTimeoutTimer?: NodeJS.Timeout;
}

/**
 * Times `command` out after `timeoutMs` of Redis's time. The timer is kept where ioredis keeps its
 * own command timer, so ioredis clears it the moment the reply arrives: a command and its arguments
 * are not held for the whole timeout after they were answered (six commands a request, each held
 * 200 ms, survived the young generation's collections: the Redis store spent ~14% more CPU per
 * request, docs/benchmarks.md), and no timer fires for a command long answered.
 */
function watch(command: Command, timeoutMs: number): void {
  const timer = command as unknown as CommandTimer;
  const started = performance.now();
  const arm = (ms: number) => {
    const due = performance.now() + ms;
    timer._commandTimeoutTimer = setTimeout(() => {
      timer._commandTimeoutTimer = undefined;
      const late = performance.now() - due;
      // The timers phase runs before the poll phase: let the loop read what already arrived first.
      setImmediate(() => {
        if (command.isResolved) return;
        const waited = performance.now() - started;
        if (late > JITTER_MS && waited + late < timeoutMs * MAX_WAIT_FACTOR) arm(late);
        else command.reject(new Error('Command timed out'));
      });
    }, ms).unref();
  };
  arm(timeoutMs);
}
