// Requests Node's HTTP parser refuses never reach the server's handler: bad bytes in the request
// line or a header, an unknown method, conflicting or malformed Content-Length, a bad chunk size,
// headers over 16 KB, a body the client's half-close cut short. Node answers them with a bare
// "400 Bad Request" and no body, which OpenAI clients cannot read as an error. Here they get
// OpenAI's error body like every other refusal; then the connection closes, as Node's would (the
// parser cannot read on past the error).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from './errors.js';

/** The refusal for a parser error, by Node's error code (the statuses Node's own handler uses). */
function refusalFor(error: NodeJS.ErrnoException): { status: number; reason: string; error: GatewayError } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: 'Request Header Fields Too Large',
        error: new GatewayError('bad_request', { status: 431, code: 'request_header_fields_too_large', message: 'Request headers too large (the limit is 16 KB)' }),
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', error: new GatewayError('payload_too_large', { message: 'Chunk extensions too large' }) };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', error: new GatewayError('bad_request', { status: 408, code: 'request_timeout', message: 'The request was not received in time' }) };
    default:
      return {
        status: 400,
        reason: 'Bad Request',
        error: new GatewayError('bad_request', { code: 'invalid_http_request', message: `Malformed HTTP request (${error.code ?? 'parse error'})` }),
      };
  }
}

export function answerParserErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, duplex) => {
    const socket = duplex as Socket;
    // As Node's own handler: write only on a connection that can take it and has had nothing
    // written yet (a response under way cannot be followed by another one); otherwise just close.
    if (error.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const { status, reason, error: refusal } = refusalFor(error);
    const payload = JSON.stringify(refusal.toBody());
    const head = `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n`;
    socket.end(head + payload, () => socket.destroy());
  });
}
