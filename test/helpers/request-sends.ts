/**
 * When this process's undici really wrote each request to a site: undici publishes
 * `undici:client:sendHeaders` as it writes a request's headers to the socket. This is the
 * crawler's own moment of sending, free of the delay before the site gets to read it.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

const SEND_HEADERS = 'undici:client:sendHeaders';

export interface RequestSends {
  /** Send times (epoch ms) of requests to `origin`, robots.txt left out, in order. */
  times(): number[];
  stop(): void;
}

export function recordRequestSends(origin: string): RequestSends {
  const times: number[] = [];
  const onSend = (message: unknown): void => {
    const { request } = message as { request: { origin: string; path: string } };
    if (String(request.origin) === origin && request.path !== '/robots.txt') times.push(Date.now());
  };
  subscribe(SEND_HEADERS, onSend);
  return { times: () => [...times], stop: () => unsubscribe(SEND_HEADERS, onSend) };
}
