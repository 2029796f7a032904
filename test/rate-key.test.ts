import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rateKeyForIp, readCookie } from '../src/http/client.ts';

test('rate-limit keys: IPv4 as is, IPv4-mapped as IPv4, IPv6 by its /64', () => {
  assert.equal(rateKeyForIp('10.0.0.1'), '10.0.0.1');
  assert.equal(rateKeyForIp('::ffff:10.0.0.1'), '10.0.0.1');
  assert.equal(rateKeyForIp('2001:DB8:0:00a1:1:2:3:4'), '2001:db8:0:a1::/64');
  assert.equal(rateKeyForIp('2001:db8:0:a1::9'), '2001:db8:0:a1::/64');
  assert.equal(rateKeyForIp('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(rateKeyForIp('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(rateKeyForIp('::1'), '0:0:0:0::/64');
});

test('cookies: the first of a name, decoded; one that does not decode is passed over', () => {
  assert.equal(readCookie('a=1; __csrf=csrf_x%20y; __csrf=second', '__csrf'), 'csrf_x y');
  assert.equal(readCookie(' s = v ;', 's'), 'v');
  assert.equal(readCookie('x=%E0%A4%A', 'x'), undefined);
  assert.equal(readCookie(undefined, 'x'), undefined);
  assert.equal(readCookie('a=1', 'x'), undefined);
});
