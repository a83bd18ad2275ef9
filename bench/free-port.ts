/** A free TCP port on loopback, for servers whose port must be chosen before they start. */
import { createServer } from 'node:net';
import { once } from 'node:events';

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('could not get a free port');
  return address.port;
}
