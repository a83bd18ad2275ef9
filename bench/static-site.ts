/**
 * The bench's site as static files for another server (nginx), to check that a crawler's
 * rate is its own and not an artefact of the bench's Node site server: the same seeded graph
 * and the same bytes per page (src/sites/synthetic-site.ts), written as <dir>/page/N, plus an
 * nginx config that serves them on loopback as text/html with keep-alive.
 *
 *   node dist/bench/static-site.js --dir .tools/static-site --pages 20000 --port 18080
 *   nginx -c "$PWD/.tools/static-site/nginx.conf"    # stop: nginx -c ... -s quit
 *
 * Every reachable page comes from /page/0, as on the bench site; nginx's access log
 * (<dir>/access.log) is what shows whether each page was fetched exactly once.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pagePath, renderPage, SiteGraph } from '../src/sites/synthetic-site';
import { PAGE_BYTES, SITE_SEED } from './site-process';

function nginxConfig(dir: string, port: number): string {
  return `# Written by bench/static-site.ts.
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log ${dir}/access.log;
  default_type "text/html; charset=utf-8";
  sendfile on;
  # Crawlers keep connections open for the whole crawl; nginx's default closes one after
  # 1,000 requests, which the bench's Node site never does.
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:${port};
    root ${dir}/root;
  }
}
`;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      pages: { type: 'string', default: '20000' },
      port: { type: 'string', default: '18080' },
    },
  });
  if (!values.dir) throw new Error('--dir is required');
  const dir = resolve(values.dir);
  const pages = Number(values.pages);
  const graph = new SiteGraph({ pages, seed: SITE_SEED });
  mkdirSync(join(dir, 'root', 'page'), { recursive: true });
  for (let page = 0; page < pages; page += 1) writeFileSync(join(dir, 'root', pagePath(page)), renderPage(graph, page, PAGE_BYTES));
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, Number(values.port)));
  process.stdout.write(`${JSON.stringify({ origin: `http://127.0.0.1:${values.port}`, dir, pages, reachable: graph.reachableFrom(0).size })}\n`);
}

main();
