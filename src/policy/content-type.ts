/**
 * Which response media types a crawl keeps (`allowedContentTypes`): `type/subtype` or
 * `type/*`, compared case-insensitively and without parameters (`; charset=...`). A response
 * without a Content-Type is taken as text/html, as browsers sniff it (the binary check of
 * the fetch still refuses one that is not text).
 */
export type ContentTypeFilter = (contentType: string | null) => boolean;

/** A media range as the config accepts it. */
export const MEDIA_RANGE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/(?:\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$/i;

export function mediaType(contentType: string | null): string {
  return (contentType ?? 'text/html').split(';', 1)[0].trim().toLowerCase();
}

export function buildContentTypeFilter(allowed: readonly string[]): ContentTypeFilter {
  const exact = new Set(allowed.map((range) => range.toLowerCase()).filter((range) => !range.endsWith('/*')));
  const wildcards = allowed.filter((range) => range.endsWith('/*')).map((range) => range.slice(0, -1).toLowerCase());
  return (contentType) => {
    const type = mediaType(contentType);
    return exact.has(type) || wildcards.some((prefix) => type.startsWith(prefix));
  };
}
