/**
 * What a page rendered in Chromium may load. Rendering runs a site's scripts, and a script
 * can ask for anything: another site, the cloud metadata endpoint, a tracking pixel. Every
 * request the browser makes is judged here first; only what passes is fetched, and then by
 * the crawl's own guarded transport, never by the browser (see chromium-renderer.ts).
 *
 * Only what can add links to the DOM is loaded at all: scripts, XHR/fetch and frames. Images,
 * stylesheets, fonts and media cannot, so they are blocked rather than spent against the site.
 */
import type { ScopePredicate } from '../policy/scope';

/** Why a request was refused (bounded set: a metric label and a test hook). */
export type BlockReason = 'out-of-scope' | 'scheme' | 'method' | 'resource-type' | 'too-many-requests' | 'navigation' | 'websocket';

export type RequestVerdict = { allow: true } | { allow: false; reason: BlockReason };

/** Playwright's resource types worth loading to build the DOM. */
const LOADED_TYPES: ReadonlySet<string> = new Set(['document', 'script', 'xhr', 'fetch']);

export interface SubrequestRule {
  inScope: ScopePredicate;
  maxRequests: number;
}

export interface Subrequest {
  url: string;
  method: string;
  resourceType: string;
  /** A navigation of the page's own (top) frame, after the page itself was served. */
  topNavigation: boolean;
}

/** Judges one request of a rendered page; `made` is how many this page was already allowed. */
export function judgeSubrequest(request: Subrequest, made: number, rule: SubrequestRule): RequestVerdict {
  // A script that moves the page elsewhere would make us render (and record) another URL.
  if (request.topNavigation) return { allow: false, reason: 'navigation' };
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { allow: false, reason: 'scheme' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { allow: false, reason: 'scheme' };
  if (!rule.inScope(url)) return { allow: false, reason: 'out-of-scope' };
  // Rendering is read-only: a crawler never submits forms or posts beacons.
  if (request.method !== 'GET') return { allow: false, reason: 'method' };
  if (!LOADED_TYPES.has(request.resourceType)) return { allow: false, reason: 'resource-type' };
  if (made >= rule.maxRequests) return { allow: false, reason: 'too-many-requests' };
  return { allow: true };
}
