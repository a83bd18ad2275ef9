/** The log format: readable at a terminal, JSON lines for anything else, or as asked. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { logFormat } from '../src/observability/logger';

describe('logFormat', () => {
  it('is pretty when stderr is a terminal and JSON otherwise, unless CRAWLFLOW_LOG_FORMAT says', () => {
    assert.equal(logFormat({}, true), 'pretty');
    assert.equal(logFormat({}, false), 'json');
    assert.equal(logFormat({ CRAWLFLOW_LOG_FORMAT: '' }, true), 'pretty');
    assert.equal(logFormat({ CRAWLFLOW_LOG_FORMAT: 'json' }, true), 'json');
    assert.equal(logFormat({ CRAWLFLOW_LOG_FORMAT: 'pretty' }, false), 'pretty');
  });

  it('refuses an unknown format, naming the variable', () => {
    assert.throws(() => logFormat({ CRAWLFLOW_LOG_FORMAT: 'xml' }, true), { message: 'CRAWLFLOW_LOG_FORMAT must be one of json, pretty, not "xml"' });
  });
});
