import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { type Config, parseConfig } from '../config';
import type { Logger } from '../logger';
import { errorEnvelope, type PartnerErrorCode } from '../trpc/errors';
import type { App } from './app';

export type HttpServer = http.Server & {
  /** D-20: stop accepting, answer what is in progress with `Connection: close`; false if `timeoutMs` cut it short. */
  drain(timeoutMs: number): Promise<boolean>;
};

/** D-21: the bounds on sockets, each one of Node's own server options (server/config.ts documents them). */
export type SocketBounds = Pick<
  Config,
  'MAX_CONNECTIONS' | 'HEADERS_TIMEOUT_MS' | 'KEEP_ALIVE_TIMEOUT_MS' | 'SEND_TIMEOUT_MS'
>;

/** How often Node checks headersTimeout (its default, 30 s, would hold a silent socket that long). */
const CHECK_INTERVAL_MS = 1_000;

/** A raw response for a request express never sees, in the envelope with a request id (D-12). */
function answerRaw(socket: net.Socket, code: PartnerErrorCode, requestId: string) {
  const envelope = errorEnvelope(code);
  const body = JSON.stringify(envelope);
  socket.end(
    [
      `HTTP/1.1 ${envelope.status_code} ${http.STATUS_CODES[envelope.status_code]}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `x-request-id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}

/** The HTTP server: sockets bounded by Node's options (D-21); parser refusals and CONNECT in the envelope (D-12). */
export function createHttpServer(
  app: http.RequestListener & Partial<Pick<App, 'inProgress' | 'closing'>>,
  log: Logger,
  bounds: Partial<SocketBounds> = {},
): HttpServer {
  const bound = { ...parseConfig({}), ...bounds };
  const server = http.createServer(
    {
      requireHostHeader: false,
      headersTimeout: bound.HEADERS_TIMEOUT_MS,
      // The API takes no request bodies: the whole request is due when its headers are.
      requestTimeout: bound.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
      keepAliveTimeout: bound.KEEP_ALIVE_TIMEOUT_MS,
    },
    app,
  ) as HttpServer;
  server.maxConnections = bound.MAX_CONNECTIONS;
  server.timeout = bound.SEND_TIMEOUT_MS;
  // A reset also drops what the kernel holds for a client that does not read (a close leaves it to TCP).
  server.on('timeout', (socket: net.Socket) => socket.resetAndDestroy());
  let dropped = 0;
  server.on('drop', () => {
    if (dropped++ > 0) return;
    setTimeout(() => {
      log.warn({ dropped, withinMs: 10_000 }, 'connections refused over MAX_CONNECTIONS');
      dropped = 0;
    }, 10_000).unref();
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: net.Socket) => {
    // A timed-out request gets no answer; nor does a connection with a response already under way.
    const answering = [...(app.inProgress ?? [])].some((res) => res.socket === socket && res.headersSent);
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable || answering) return socket.destroy();
    const requestId = randomUUID();
    log.warn({ requestId, code: error.code, error }, 'request refused by the HTTP parser');
    answerRaw(socket, 'PARTNER_API_INVALID_PARAMETER', requestId);
  });
  // An unknown expectation goes to the app, which refuses it in the envelope (Node would answer a bare 417).
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  // CONNECT is no method of the API (D-12): 404 in the envelope, then the connection is closed.
  server.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
    const requestId = randomUUID();
    log.info({ requestId, method: req.method, status: 404, code: 'PARTNER_API_NOT_FOUND' }, 'request');
    answerRaw(socket, 'PARTNER_API_NOT_FOUND', requestId);
    socket.setTimeout(2_000, () => socket.destroy());
  });
  server.drain = (timeoutMs) =>
    new Promise<boolean>((resolve) => {
      app.closing = true;
      for (const res of app.inProgress ?? []) {
        if (!res.headersSent) res.setHeader('Connection', 'close');
        else res.once('finish', () => res.req.socket.end());
      }
      const timer = setTimeout(() => {
        server.closeAllConnections();
        resolve(false);
      }, timeoutMs);
      // net.Server's close: http.Server's would reset a request that reached an idle connection unread.
      net.Server.prototype.close.call(server, () => {
        clearTimeout(timer);
        resolve(true);
      });
      setTimeout(() => server.closeIdleConnections());
    });
  return server;
}
