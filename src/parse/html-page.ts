/**
 * What a crawler needs from an HTML page: title, outgoing links (absolute, normalized,
 * de-duplicated, capped), canonical URL and robots directives from `<meta>` and
 * X-Robots-Tag. Uses htmlparser2 through cheerio: lenient with broken markup and fast.
 */
import { load } from 'cheerio';
import { normalizeUrl } from '../policy/normalize-url';

export interface ParsedPage {
  title: string | null;
  links: string[];
  canonical: string | null;
  noindex: boolean;
  nofollow: boolean;
}

export interface ParseLimits {
  maxLinks: number;
  maxUrlLength: number;
}

function robotsDirectives(values: Array<string | null | undefined>): Set<string> {
  const directives = new Set<string>();
  for (const value of values) {
    for (const part of value?.toLowerCase().split(',') ?? []) {
      // X-Robots-Tag may name a user agent first ("googlebot: noindex"); keep the directive.
      const directive = part.split(':').pop()?.trim();
      if (directive) directives.add(directive);
    }
  }
  return directives;
}

export function parseHtmlPage(html: string, pageUrl: string, robotsHeader: string | null, limits: ParseLimits): ParsedPage {
  const $ = load(html, { xml: { xmlMode: false, decodeEntities: true } });
  const baseHref = $('base[href]').first().attr('href');
  const base = (baseHref && normalizeUrl(baseHref, pageUrl)) || pageUrl;

  const links = new Set<string>();
  for (const element of $('a[href], area[href]')) {
    if (links.size >= limits.maxLinks) break;
    const link = normalizeUrl(element.attribs.href, base);
    if (link && link.length <= limits.maxUrlLength) links.add(link);
  }

  const canonicalHref = $('link[rel="canonical"][href]').first().attr('href');
  const metaRobots = $('meta[name="robots" i], meta[name="crawlflow" i]')
    .map((_, element) => element.attribs.content)
    .get();
  const directives = robotsDirectives([...metaRobots, robotsHeader]);
  const title = $('title').first().text().replace(/\s+/g, ' ').trim();

  return {
    title: title || null,
    links: [...links],
    canonical: (canonicalHref && normalizeUrl(canonicalHref, base)) || null,
    noindex: directives.has('noindex') || directives.has('none'),
    nofollow: directives.has('nofollow') || directives.has('none'),
  };
}
