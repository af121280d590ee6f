import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { Express } from 'express';
import { errorEnvelope } from './errors';
import type { Logger } from './logger';

export type HttpServer = http.Server & {
  /**
   * D-17/D-20 drain: stop accepting; answer every request already received or arriving on an open
   * connection, each with `Connection: close`; close keep-alive connections once idle. Resolves true when
   * every connection has closed, false if `timeoutMs` passed first (the rest are then cut).
   */
  drain(timeoutMs: number): Promise<boolean>;
};

/**
 * A keep-alive connection idle this long while draining is closed; a request arriving within it is
 * answered. Closing is a race with a client that is sending its next request on that connection (it
 * gets ECONNRESET): a busy client can take well over 100 ms between two calls (seen in the drain test on
 * a loaded machine), and 1 s makes a connection that idle one its client has left, not one it is reusing.
 */
const IDLE_GRACE_MS = 1_000;

/**
 * The HTTP server around the app. Requests Node's own parser refuses (a malformed request line, headers
 * too large) never reach express; they too get the envelope and a request id, so nothing else reaches a
 * client (D-12). A request without Host reaches express, which answers it in the envelope (server/app.ts).
 */
export function createHttpServer(app: Express, log: Logger): HttpServer {
  const server = http.createServer({ requireHostHeader: false }, app) as HttpServer;
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

  // Per connection: requests in progress, and since when it has been idle.
  const connections = new Map<net.Socket, { active: number; idleSince: number }>();
  server.on('connection', (socket: net.Socket) => {
    connections.set(socket, { active: 0, idleSince: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  let draining = false;
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const state = connections.get(req.socket);
    if (state) state.active += 1;
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      if (!state) return;
      state.active -= 1;
      state.idleSince = Date.now();
    });
  });

  server.drain = (timeoutMs: number) =>
    new Promise<boolean>((resolve) => {
      draining = true;
      let sweep: NodeJS.Timeout | undefined;
      const deadline = setTimeout(() => {
        clearInterval(sweep);
        for (const socket of connections.keys()) socket.destroy();
        resolve(false);
      }, timeoutMs);
      // net.Server's close: stop accepting, called back once every connection has closed. (http.Server's
      // own close also drops idle keep-alive connections at once, racing a request already on its way.)
      net.Server.prototype.close.call(server, () => {
        clearTimeout(deadline);
        clearInterval(sweep);
        resolve(true);
      });
      const closeIdle = () => {
        const now = Date.now();
        for (const [socket, state] of connections)
          if (state.active === 0 && now - state.idleSince >= IDLE_GRACE_MS) socket.end();
      };
      sweep = setInterval(closeIdle, 25);
      closeIdle();
    });
  return server;
}
