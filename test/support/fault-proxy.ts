import net from 'node:net';

/**
 * A TCP proxy (node:net) between the service and PostgreSQL or Redis, so a test can stall, cut or restore
 * the store without touching the machine's services.
 * - `pause()`: bytes stop flowing both ways on every connection, and new connections are accepted but
 *   carry nothing: a stalled server (SIGSTOP) as the client sees it.
 * - `cut()`: every connection is reset and new ones are refused: a server that is down.
 * - `restore()`: back to forwarding.
 */
export async function startFaultProxy(target: { host: string; port: number }) {
  let mode: 'forward' | 'paused' | 'down' = 'forward';
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((client) => {
    if (mode === 'down') return client.destroy();
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
    if (mode === 'paused') for (const socket of pair) socket.pause();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    /** Connections opened so far and still open. */
    get connections() {
      return pairs.size;
    },
    pause() {
      mode = 'paused';
      for (const pair of pairs) for (const socket of pair) socket.pause();
    },
    cut() {
      mode = 'down';
      for (const [client, upstream] of pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      pairs.clear();
    },
    restore() {
      mode = 'forward';
      for (const pair of pairs) for (const socket of pair) socket.resume();
    },
    async close() {
      this.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type FaultProxy = Awaited<ReturnType<typeof startFaultProxy>>;
