/**
 * Makes sure the server knows crawlflow's custom search attributes. The embedded dev server
 * gets them as start flags; for any other server a worker registers them on start-up (the
 * operator API, allowed on self-hosted clusters), or an operator runs the command in docs/operations.md#search-attributes.
 */
import type { Connection } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { CRAWL_SEARCH_ATTRIBUTES } from '../shared/search-attributes';

const { IndexedValueType } = temporal.api.enums.v1;

function indexedType(type: SearchAttributeType): temporal.api.enums.v1.IndexedValueType {
  return type === 'INT' ? IndexedValueType.INDEXED_VALUE_TYPE_INT : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
}

/** `Name=Type` pairs in the form `temporal server start-dev --search-attribute` takes. */
export function devServerSearchAttributeFlags(): string[] {
  return CRAWL_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => ['--search-attribute', `${name}=${type === 'INT' ? 'Int' : 'Keyword'}`]);
}

/** Registers the missing attributes; returns the names it added. */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = CRAWL_SEARCH_ATTRIBUTES.filter(({ name }) => !(name in (customAttributes ?? {})));
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map(({ name, type }) => [name, indexedType(type)])),
  });
  return missing.map(({ name }) => name);
}
