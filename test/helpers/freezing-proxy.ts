/**
 * A loopback TCP proxy in front of a server that can be made to stop answering without closing
 * anything: frozen, it still accepts connections (as a stopped server's kernel does) but
 * carries no byte either way, like a server stopped with SIGSTOP or a network that drops every
 * packet. Thawed, it delivers what it held back and carries on. It freezes only its own
 * connections, so nothing else that uses the server is touched.
 */
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface FreezingProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

/** Copies `from` to `to`, holding the bytes back while `frozen()` says so. */
function carry(from: Socket, to: Socket, frozen: () => boolean, held: Array<() => void>): void {
  from.on('data', (chunk: Buffer) => {
    if (frozen()) held.push(() => to.write(chunk));
    else to.write(chunk);
  });
  from.on('close', () => (frozen() ? held.push(() => to.destroy()) : to.destroy()));
  from.on('error', () => undefined);
}

/** A proxy on loopback to `target` (a loopback port). */
export async function startFreezingProxy(targetPort: number): Promise<FreezingProxy> {
  let frozen = false;
  // What arrived while frozen, in arrival order over every connection, run on thaw.
  let held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    carry(client, upstream, () => frozen, held);
    carry(upstream, client, () => frozen, held);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => void (frozen = true),
    thaw() {
      frozen = false;
      const release = held;
      held = [];
      for (const deliver of release) deliver();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
