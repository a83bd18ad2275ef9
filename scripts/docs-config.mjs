// Rewrites the settings tables of docs/configuration.md from the crawl schema, through the
// built code: `npm run docs:config` builds first.
import { readFileSync, writeFileSync } from 'node:fs';
import configDocs from '../dist/src/cli/config-docs.js';

const { CONFIG_DOCS, withSettingsTables } = configDocs;
const file = new URL(`../${CONFIG_DOCS}`, import.meta.url);
writeFileSync(file, withSettingsTables(readFileSync(file, 'utf8')));
console.log(`${CONFIG_DOCS}: settings tables written`);
