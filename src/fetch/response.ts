/**
 * What a transport's GET gives back and what can stop it: the shapes the transport, its
 * response handler and the fetch above them share.
 */
import type { BodyBytes, BodyLimits } from './body';

export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: ResponseBody;
}

/** A response's body as it arrives: read once, or dropped. */
export interface ResponseBody {
  read(limits: BodyLimits): Promise<BodyBytes>;
  /** Drops the body; a connection still receiving it is closed. */
  discard(): void;
}

/**
 * What ends a request early: the fetch's deadline or its caller's cancellation. A fetch's
 * requests (its redirect hops) run one at a time, and each is watched while it runs.
 */
export interface RequestStop {
  /** Calls `stop` when the request must end, at once if it must already, until the returned function is called. */
  watch(stop: (reason: unknown) => void): () => void;
}
