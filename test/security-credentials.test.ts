/**
 * No authorization or cookie header value can appear in a FetchError message: whatever a
 * transport, a server or our own code puts in an error, the message that reaches logs and
 * metrics is redacted, and the unredacted original is not kept as its cause.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FetchError, redactSecrets, toFetchError } from '../src/fetch/errors';
import { hostileSite, LOOPBACK_GUARD } from './helpers/hostile-site';

const SECRET = 's3cr3t-t0ken';

describe('credentials in FetchError messages', () => {
  it('are redacted in every common spelling', () => {
    for (const message of [
      `request failed: authorization: Bearer ${SECRET}`,
      `headers {"Authorization":"Basic ${SECRET}","accept":"*/*"}`,
      `{ cookie: 'session=${SECRET}; theme=dark' }`,
      `raw headers [ 'Proxy-Authorization', 'Basic ${SECRET}' ]`,
      `upstream said Set-Cookie=id=${SECRET}; HttpOnly`,
      `COOKIE:${SECRET}`,
    ]) {
      const redacted = redactSecrets(message);
      assert.ok(!redacted.includes(SECRET), redacted);
      assert.match(redacted, /\[redacted\]/);
      assert.ok(!new FetchError('network', message).message.includes(SECRET), 'the constructor redacts');
    }
    assert.equal(redactSecrets('connect ECONNREFUSED 127.0.0.1:80'), 'connect ECONNREFUSED 127.0.0.1:80', 'other messages are untouched');
  });

  it('toFetchError redacts a foreign error and drops it as the cause', () => {
    const foreign = Object.assign(new Error(`socket hang up; cookie: sid=${SECRET}`), { code: 'ECONNRESET' });
    const err = toFetchError(foreign);
    assert.equal(err.code, 'reset', 'the code is still derived from the original');
    assert.ok(!err.message.includes(SECRET));
    assert.ok(!String(err.stack).includes(SECRET), 'nor in the stack, which repeats the message');
    assert.equal(err.cause, undefined, 'the unredacted original is not carried along');

    const harmless = new Error('read ECONNRESET');
    assert.equal(toFetchError(harmless).cause, harmless, 'a harmless original stays the cause');
  });

  describe('from the real transport', () => {
    const { site, transport } = hostileSite();

    it('an invalid credential header is reported without its value', async () => {
      await assert.rejects(
        transport.get(new URL(site.url('/')), { authorization: `Bearer ${SECRET}\r\nX-Injected: 1` }, { watch: () => () => undefined }, LOOPBACK_GUARD),
        (err: unknown) => {
          const fetchError = toFetchError(err);
          assert.ok(!fetchError.message.includes(SECRET), fetchError.message);
          return true;
        },
      );
    });
  });
});
