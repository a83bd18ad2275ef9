/**
 * A parse thread's entry (see page-parsers.ts): parses each page the main thread posts, with
 * the normalization rules the request names, and posts back the parse or the error's code.
 */
import { parentPort } from 'node:worker_threads';
import { buildNormalizer, type UrlNormalizer } from '../policy/normalize-url';
import { parseHtmlPage } from './html-page';
import type { ParseReply, ParseRequest } from './page-parsers';

const port = parentPort;
if (port === null) throw new Error('parse-thread.js runs as a worker thread (see page-parsers.ts)');

const normalizers = new Map<number, UrlNormalizer>();

port.on('message', (request: ParseRequest) => {
  let reply: ParseReply;
  try {
    if (request.rules !== undefined) normalizers.set(request.rulesId, buildNormalizer(request.rules));
    const normalize = normalizers.get(request.rulesId);
    if (normalize === undefined) throw new Error(`no normalization rules numbered ${request.rulesId} were sent`);
    reply = { id: request.id, parsed: parseHtmlPage(request.html, request.pageUrl, request.robotsHeader, request, normalize) };
  } catch (err) {
    const { code, message } = err as { code?: unknown; message?: unknown };
    reply = { id: request.id, error: { ...(typeof code === 'string' ? { code } : {}), message: String(message ?? err) } };
  }
  port.postMessage(reply);
});
