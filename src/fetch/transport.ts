/**
 * The transport: one GET, nothing else. Redirects, caps, decoding and policy live above it,
 * so tests (and a future proxy or DNS-checking connector) can swap it without touching them.
 */
import { Agent, type Dispatcher } from 'undici';
import type { Readable } from 'node:stream';

export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/**
 * Drops a body we do not want. Destroying an undici body emits an abort error, which would be
 * an unhandled 'error' event without the listener.
 */
export function discardBody(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

export interface Transport {
  get(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<TransportResponse>;
  close(): Promise<void>;
}

export interface UndiciTransportOptions {
  connectTimeoutMs: number;
  /** Time to the response headers, and the longest silence while the body streams. */
  idleTimeoutMs: number;
  connectionsPerOrigin: number;
}

export class UndiciTransport implements Transport {
  private readonly agent: Dispatcher;

  constructor(options: UndiciTransportOptions) {
    this.agent = new Agent({
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.idleTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      keepAliveTimeout: 10_000,
      connections: options.connectionsPerOrigin,
    });
  }

  async get(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<TransportResponse> {
    const response = await this.agent.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: 'GET',
      headers,
      signal,
    });
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
