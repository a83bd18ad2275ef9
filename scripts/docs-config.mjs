// Rewrites the generated tables of docs/configuration.md (settings from the crawl schema,
// record fields from their declaration), through the built code: `npm run docs:config` builds first.
import { readFileSync, writeFileSync } from 'node:fs';
import configDocs from '../dist/src/cli/config-docs.js';

const { CONFIG_DOCS, withGeneratedTables } = configDocs;
const file = new URL(`../${CONFIG_DOCS}`, import.meta.url);
writeFileSync(file, withGeneratedTables(readFileSync(file, 'utf8')));
console.log(`${CONFIG_DOCS}: generated tables written`);
