import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { Express } from 'express';
import { type Config, parseConfig } from './config';
import { errorEnvelope, type PartnerErrorCode } from './errors';
import type { Logger } from './logger';

export type HttpServer = http.Server & {
  /**
   * D-17/D-20 drain: stop accepting; answer every request already received or arriving on an open
   * connection, each with `Connection: close`; close keep-alive connections once idle. Resolves true when
   * every connection has closed, false if `timeoutMs` passed first (the rest are then cut).
   */
  drain(timeoutMs: number): Promise<boolean>;
};

/** D-21: the bounds on connections (server/config.ts documents each; README § Operations lists them). */
export type ConnectionLimits = Pick<
  Config,
  | 'MAX_CONNECTIONS'
  | 'MAX_CONNECTIONS_PER_ADDRESS'
  | 'FIRST_REQUEST_TIMEOUT_MS'
  | 'KEEP_ALIVE_TIMEOUT_MS'
  | 'SEND_TIMEOUT_MS'
>;

export function connectionLimits(config: Config): ConnectionLimits {
  const {
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_ADDRESS,
    FIRST_REQUEST_TIMEOUT_MS,
    KEEP_ALIVE_TIMEOUT_MS,
    SEND_TIMEOUT_MS,
  } = config;
  return {
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_ADDRESS,
    FIRST_REQUEST_TIMEOUT_MS,
    KEEP_ALIVE_TIMEOUT_MS,
    SEND_TIMEOUT_MS,
  };
}

/**
 * A keep-alive connection idle this long while draining is closed; a request arriving within it is
 * answered. Closing is a race with a client that is sending its next request on that connection (it
 * gets ECONNRESET): a busy client can take well over 100 ms between two calls (seen in the drain test on
 * a loaded machine), and 1 s makes a connection that idle one its client has left, not one it is reusing.
 */
const IDLE_GRACE_MS = 1_000;

/**
 * A connection the server ends (idle too long) is given this long to take what is still on its way to
 * it and close; then it is reset, which also frees what the kernel holds for a reader that never reads.
 */
const LINGER_MS = 2_000;

/** A response this large is a download; API answers are far smaller (their lists are capped). */
const DOWNLOAD_BYTES = 256 * 1024;

/** Refused connections are logged at most once per this long, with their count: no log storm under attack. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * The client address a per-address cap counts (D-21): the TCP peer, an IPv4-mapped IPv6 address as the
 * IPv4 address, any other IPv6 address by its /64 (one host's usual allocation).
 */
export function addressGroup(address: string | undefined): string {
  if (!address) return 'unknown';
  const plain = address.split('%')[0] ?? address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
  if (mapped?.[1]) return mapped[1];
  if (!net.isIPv6(plain)) return plain;
  const [head = '', tail] = plain.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** A raw response for a request express never sees, in the envelope with a request id (D-12). */
function answerRaw(socket: Pick<net.Socket, 'end'>, code: PartnerErrorCode, requestId: string) {
  const body = JSON.stringify(errorEnvelope(code));
  const status = errorEnvelope(code).status_code;
  socket.end(
    [
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `x-request-id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}

/** Ends a connection; the server's timeout listener resets it if its client has not closed in LINGER_MS. */
function linger(socket: net.Socket) {
  socket.end();
  socket.setTimeout(LINGER_MS);
}

/** Closes with a reset: the kernel drops what it still holds for this connection. */
function reset(socket: net.Socket) {
  if (!socket.destroyed) socket.resetAndDestroy();
}

type ConnectionState = {
  /** Responses in progress (more than one only when requests are pipelined). */
  responses: Set<http.ServerResponse>;
  idleSince: number;
  requests: number;
  group: string;
};

/**
 * The HTTP server around the app. Requests Node's own parser refuses (a malformed request line, headers
 * too large) never reach express; they too get the envelope and a request id, so nothing else reaches a
 * client (D-12). A request without Host, or with an expectation other than 100-continue, reaches express,
 * which answers it in the envelope (server/app.ts).
 *
 * D-21: connections are bounded in number (per process, per client address) and in time (to the first
 * request, between requests, while a response is stalled). A connection over a cap is closed as it
 * arrives, before any byte is read: no request has been made on it yet, so there is nothing to answer,
 * and reading one would spend what the cap protects.
 */
export function createHttpServer(app: Express, log: Logger, limits: Partial<ConnectionLimits> = {}): HttpServer {
  const bounds = { ...connectionLimits(parseConfig({})), ...limits };
  const server = http.createServer(
    {
      requireHostHeader: false,
      keepAliveTimeout: bounds.KEEP_ALIVE_TIMEOUT_MS,
      // Above the keep-alive timeout, so an idle connection is the keep-alive timer's to close (D-21).
      headersTimeout: bounds.KEEP_ALIVE_TIMEOUT_MS + 1_000,
      // Node's default, unless that would be below headersTimeout (which Node refuses).
      requestTimeout: Math.max(300_000, bounds.KEEP_ALIVE_TIMEOUT_MS + 1_000),
      connectionsCheckingInterval: 5_000,
    },
    app,
  ) as HttpServer;
  server.maxConnections = bounds.MAX_CONNECTIONS;
  // Inactivity while a request is in progress: nothing moved either way for this long (D-21).
  server.timeout = bounds.SEND_TIMEOUT_MS;

  // Refusals are counted and logged once per interval, so an attack is one line every few seconds.
  const refusals = { process: 0, perAddress: 0 };
  const refused = (kind: keyof typeof refusals) => {
    const first = refusals.process + refusals.perAddress === 0;
    refusals[kind] += 1;
    if (!first) return;
    setTimeout(() => {
      log.warn('connections refused over their cap', { ...refusals, withinMs: REFUSAL_LOG_INTERVAL_MS });
      Object.assign(refusals, { process: 0, perAddress: 0 });
    }, REFUSAL_LOG_INTERVAL_MS).unref();
  };
  // Node closes a connection over MAX_CONNECTIONS itself, at accept.
  server.on('drop', () => refused('process'));

  server.on('clientError', (error: NodeJS.ErrnoException, socket: net.Socket) => {
    const requestId = randomUUID();
    log.warn('request refused by the HTTP parser', { requestId, code: error.code, error });
    // A response already under way on this connection (a pipelined request) must not get our bytes spliced
    // into it; nor does a connection that timed out get a 400 for a request it never finished.
    const inProgress = (socket as net.Socket & { _httpMessage?: http.ServerResponse })._httpMessage;
    if (!socket.writable || inProgress?.headersSent || error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      return socket.destroy();
    answerRaw(socket, 'PARTNER_API_INVALID_PARAMETER', requestId);
  });
  // An expectation Node does not know (not 100-continue) goes to the app, which refuses it in the
  // envelope; Node's own answer would be a bare 417.
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  // CONNECT is no method of the API (D-12): 404 in the envelope, then the connection is closed.
  server.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
    const requestId = randomUUID();
    log.info('request', { requestId, method: req.method, status: 404, code: 'PARTNER_API_NOT_FOUND' });
    answerRaw(socket, 'PARTNER_API_NOT_FOUND', requestId);
    socket.setTimeout(LINGER_MS, () => reset(socket));
  });

  // Idle or stalled too long (keep-alive timeout, or SEND_TIMEOUT_MS with a response due). A stalled
  // response is reset at once; an idle connection is ended and given a moment to take what is still on
  // its way before it is reset, so a reader that never reads cannot leave its bytes in the kernel.
  server.on('timeout', (socket: net.Socket) => {
    const pending = socket.writableLength > 0 || (connections.get(socket)?.responses.size ?? 0) > 0;
    if (pending || socket.writableEnded) reset(socket);
    else linger(socket);
  });

  // Per connection: requests in progress, since when it has been idle, and its client address.
  const connections = new Map<net.Socket, ConnectionState>();
  const perAddress = new Map<string, number>();
  server.prependListener('connection', (socket: net.Socket) => {
    const group = addressGroup(socket.remoteAddress);
    const open = perAddress.get(group) ?? 0;
    if (bounds.MAX_CONNECTIONS_PER_ADDRESS > 0 && open >= bounds.MAX_CONNECTIONS_PER_ADDRESS) {
      refused('perAddress');
      socket.destroy();
      return;
    }
    perAddress.set(group, open + 1);
    const state: ConnectionState = { responses: new Set(), idleSince: Date.now(), requests: 0, group };
    connections.set(socket, state);
    // A connection that has sent no complete request by then is closed (D-21); Node's headersTimeout
    // alone would hold it for a minute or more.
    const firstRequest = setTimeout(() => {
      if (state.requests === 0) socket.destroy();
    }, bounds.FIRST_REQUEST_TIMEOUT_MS);
    firstRequest.unref();
    socket.once('close', () => {
      clearTimeout(firstRequest);
      connections.delete(socket);
      const left = (perAddress.get(group) ?? 1) - 1;
      if (left > 0) perAddress.set(group, left);
      else perAddress.delete(group);
    });
  });
  let draining = false;
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const state = connections.get(req.socket);
    if (state) {
      state.responses.add(res);
      state.requests += 1;
    }
    if (draining) res.setHeader('Connection', 'close');
    // A download (a docs asset) is idle only SEND_TIMEOUT_MS after it, not the keep-alive timeout: its
    // bytes may still sit in the kernel for a reader that does not read (D-21).
    res.once('finish', () => {
      if (Number(res.getHeader('content-length')) >= DOWNLOAD_BYTES && !req.socket.destroyed)
        req.socket.setTimeout(bounds.SEND_TIMEOUT_MS);
    });
    res.once('close', () => {
      if (!state) return;
      state.responses.delete(res);
      state.idleSince = Date.now();
    });
  });

  server.drain = (timeoutMs: number) =>
    new Promise<boolean>((resolve) => {
      draining = true;
      // A request already in progress closes its connection once answered, too.
      for (const state of connections.values())
        for (const res of state.responses) if (!res.headersSent) res.setHeader('Connection', 'close');
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
          if (state.responses.size === 0 && now - state.idleSince >= IDLE_GRACE_MS && !socket.writableEnded) {
            linger(socket);
          }
      };
      sweep = setInterval(closeIdle, 25);
      closeIdle();
    });
  return server;
}
