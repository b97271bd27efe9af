// Reads a request body with a size limit and an idle limit: a declared Content-Length over the size
// limit is refused before reading, a body that grows past it is cut off (both 413); a body that
// stops arriving for `idleMs` is cut off too (408), so a client that stalls mid-body does not hold
// its connection until the whole-request timeout. The server closes the connection after either.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from './errors.js';

export interface BodyLimits {
  /** Bytes. */
  maxBytes: number;
  /** ms without a byte of the body. */
  idleMs: number;
}

export function readRequestBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    return Promise.reject(tooLarge(limits.maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const refuse = (error: GatewayError) => {
      cleanup();
      req.resume(); // discard the rest while the answer is written and the connection closes
      reject(error);
    };
    const stalled = () => refuse(new GatewayError('request_timeout', { message: `The request body stopped arriving: nothing for ${limits.idleMs} ms (MODELGATE_BODY_IDLE_TIMEOUT)` }));
    const idle = setTimeout(stalled, limits.idleMs);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBytes) return refuse(tooLarge(limits.maxBytes));
      chunks.push(chunk);
      idle.refresh();
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError('payload_too_large', {
    message: `Request body too large: the limit is ${limit} bytes (MODELGATE_MAX_BODY_SIZE)`,
  });
}
