import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Express } from 'express';
import { errorEnvelope } from './errors';
import type { Logger } from './logger';

/**
 * The HTTP server around the app. Requests Node's own parser refuses (a malformed request line, headers
 * too large) never reach express; they too get the envelope and a request id, so nothing else reaches a
 * client (D-12).
 */
export function createHttpServer(app: Express, log: Logger): http.Server {
  const server = http.createServer(app);
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const requestId = randomUUID();
    log.warn('request refused by the HTTP parser', { requestId, code: error.code, error });
    if (!socket.writable) return socket.destroy();
    const body = JSON.stringify(errorEnvelope('PARTNER_API_INVALID_PARAMETER'));
    socket.end(
      [
        'HTTP/1.1 400 Bad Request',
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `x-request-id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
  return server;
}
