import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { saveResource } from '../src/domain/resources/resources.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { isRestOperation } from '../src/operations/types.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { appRoutes } from './support/app-routes.ts';

const EVIL = 'https://evil.example';

/** Every row of every table: a refused request must leave all of it as it was. */
async function storedState(t: TestApp): Promise<string> {
  const tables = (await t.deps.db.introspection.getTables()).map((table) => table.name).sort();
  const dump: Record<string, unknown[]> = {};
  for (const table of tables) {
    dump[table] = await (t.deps.db as any).selectFrom(table).selectAll().execute();
  }
  return JSON.stringify(dump);
}

/** A request exactly as given (fetch would add a Content-Type, and refuses to set Host). */
function rawRequest(
  t: TestApp,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  const port = new URL(t.baseUrl).port;
  return new Promise((resolve, reject) => {
    const sized =
      body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    // A connection of its own: an answer sent before its body was read leaves nothing for the next request.
    const options = { host: '127.0.0.1', port, method, path, headers: sized, agent: false };
    const request = httpRequest(options, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** The CSRF field a page's forms carry for this cookie, and the cookie with what the page set. */
async function csrfOfPage(t: TestApp, cookie: string): Promise<{ csrf: string; cookie: string }> {
  const page = await fetch(`${t.baseUrl}/membership`, { headers: { cookie } });
  assert.equal(page.status, 200);
  const csrf = (await page.text()).match(/name="csrf" value="([^"]+)"/)?.[1];
  assert.ok(csrf, 'the page has a form with a CSRF field');
  const set = page.headers.getSetCookie().map((line) => line.split(';')[0]);
  return { csrf, cookie: [cookie, ...set].join('; ') };
}

/** The operations a browser's session cookie authenticates that are not a safe read, from the registry. */
const cookieWrites = OPERATIONS.filter(isRestOperation).filter(
  (op) => op.method !== 'GET' && op.credential !== 'bearer',
);

function slotOn(day: number, fromHour: number) {
  return {
    resource_id: 'room-a',
    start_iso: new Date(day + fromHour * MS.hour).toISOString(),
    end_iso: new Date(day + (fromHour + 1) * MS.hour).toISOString(),
    email: 'owner@test.example',
  };
}

describe('state-changing calls authenticated by the session cookie refuse other sites', () => {
  let t: TestApp;
  let day: number;
  let coreCookie: string;
  let memberCookie: string;
  let memberId: string;
  /** A valid input for each operation, so that only the origin decides. */
  let inputs: Record<string, unknown>;

  before(async () => {
    t = await startTestApp();
    await saveResource(t.deps.db, {
      id: 'room-a',
      kind: 'room',
      name: 'Room A',
      capacity: 8,
      openHours: { weekdays: '00:00-24:00', weekends: '00:00-24:00' },
      bookable: true,
    });
    day = t.clock.now() - (t.clock.now() % MS.day) + 14 * MS.day;
    const core = await t.member('core', 'Cora');
    coreCookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, core.id)}`;
    const member = await t.member('member', 'Mina');
    memberId = member.id;
    memberCookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}`;
    inputs = {
      startSignup: { scopes: ['read:public'], client_name: 'Trip planner' },
      submitFeedback: { message: 'The page is fine.' },
      requestTier: { tier: 'resident' },
      cancelTierRequest: {},
      bookResource: slotOn(day, 9),
      cancelBooking: { booking_id: 'bkg_cross_site' },
      rsvpToEvent: { event_url: `https://${t.deps.config.eventUrlHosts[0]}/cross-site` },
      cancelRsvp: { event_url: `https://${t.deps.config.eventUrlHosts[0]}/cross-site` },
      requestEvent: { title: 'Cross-site meetup', start: new Date(day).toISOString() },
      researchAsk: { q: 'events' },
      batchPublicReads: { requests: [{ id: 'up', method: 'GET', path: '/api/events/upcoming' }] },
      leaderboardOptIn: { optIn: false },
      registerSigningKey: {
        token_id: 'tok_cross_site',
        jwk: { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' },
      },
      revokeSigningKey: { token_id: 'tok_cross_site' },
      toggleSignatureEnforcement: { token_id: 'tok_cross_site' },
      donate: { amount_usd: 5, name: 'Cora', message: 'Thanks!' },
    };
  });
  after(() => t?.close());

  test('the registry has such operations, and each has a sample input here', () => {
    const ids = cookieWrites.map((op) => op.id);
    for (const id of ['requestTier', 'cancelTierRequest', 'bookResource', 'leaderboardOptIn'])
      assert.ok(ids.includes(id), `${id} is a cookie-authenticated write`);
    for (const id of ids) assert.ok(id in inputs, `a sample input for ${id}`);
  });

  test('each one, with the session cookie and a foreign Origin or Sec-Fetch-Site cross-site: 403, nothing stored', async () => {
    const refusals: [string, Record<string, string>][] = [
      ['Origin https://evil.example', { origin: EVIL }],
      ['Origin null', { origin: 'null' }],
      ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site same-site without Origin', { 'sec-fetch-site': 'same-site' }],
      ['same-origin fetch metadata but a foreign Origin', { 'sec-fetch-site': 'same-origin', origin: EVIL }],
    ];
    for (const op of cookieWrites) {
      for (const [what, headers] of refusals) {
        const before = await storedState(t);
        const response = await t.call(op.method, op.path, {
          headers: { cookie: op.id === 'requestTier' ? memberCookie : coreCookie, ...headers },
          body: inputs[op.id],
        });
        const label = `${op.method} ${op.path} (${what})`;
        assert.equal(response.status, 403, `${label}: ${response.text}`);
        assert.equal(response.body.error, 'cross_site_request', label);
        assert.equal(response.body.error_kind, 'forbidden', label);
        assert.match(response.body.message, /another site|not this service's origin/, label);
        assert.equal(response.body.request_id, response.headers.get('x-request-id'), label);
        assert.equal(await storedState(t), before, `${label}: nothing stored`);
      }
    }
    const rows = await t.deps.db
      .selectFrom('tier_requests')
      .selectAll()
      .where('member_id', '=', memberId)
      .execute();
    assert.deepEqual(rows, [], 'no tier request row');
  });

  test('a body not declared as JSON is refused (what a page of another site can send without a preflight)', async () => {
    for (const op of cookieWrites) {
      const cookie = op.id === 'requestTier' ? memberCookie : coreCookie;
      const body = JSON.stringify(inputs[op.id]);
      const before = await storedState(t);
      // No type, text/plain, a form, multipart: the API has no parser for them (415 before any operation runs).
      for (const type of [
        undefined,
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        const headers: Record<string, string> = type ? { cookie, 'content-type': type } : { cookie };
        const other = await rawRequest(t, op.method, op.path, headers, body);
        assert.equal(other.status, 415, `${op.path} as ${type}: ${other.text}`);
        assert.equal(JSON.parse(other.text).error_kind, 'unsupported_media_type');
      }
      assert.equal(await storedState(t), before, `${op.path}: nothing stored`);
    }
  });

  test('same origin, fetch metadata same-origin or none, or no browser headers at all: the call goes through', async () => {
    const requested = await t.call('POST', '/api/tier/request', {
      headers: { cookie: memberCookie, origin: t.baseUrl, 'sec-fetch-site': 'same-origin' },
      body: { tier: 'resident', note: 'from the page' },
    });
    assert.equal(requested.status, 200, requested.text);
    assert.equal(requested.body.pending.tier, 'resident');
    const stored = await t.deps.db
      .selectFrom('tier_requests')
      .selectAll()
      .where('member_id', '=', memberId)
      .where('status', '=', 'pending')
      .execute();
    assert.equal(stored.length, 1);
    assert.equal(stored[0].tier, 'resident');

    const cancelled = await t.call('DELETE', '/api/tier/request', {
      headers: { cookie: memberCookie, 'sec-fetch-site': 'same-origin', origin: t.baseUrl },
    });
    assert.equal(cancelled.status, 200, cancelled.text);

    for (const [what, headers, hour] of [
      ['no Origin, no fetch metadata (a non-browser client)', {}, 9],
      ['Sec-Fetch-Site none (typed into the address bar)', { 'sec-fetch-site': 'none' }, 10],
      ['Sec-Fetch-Site same-origin, no Origin', { 'sec-fetch-site': 'same-origin' }, 11],
      ['Origin of the public URL', { origin: t.baseUrl }, 12],
    ] as const) {
      const booked = await t.call('POST', '/api/resources/book', {
        headers: { cookie: coreCookie, ...headers },
        body: slotOn(day, hour),
      });
      assert.equal(booked.status, 202, `${what}: ${booked.text}`);
      const row = await t.deps.db
        .selectFrom('bookings')
        .selectAll()
        .where('id', '=', booked.body.id)
        .executeTakeFirst();
      assert.ok(row, `${what}: the booking is stored`);
    }
  });

  test("an Origin naming the request's own Host is accepted when it differs from the public URL", async () => {
    const port = new URL(t.baseUrl).port;
    const answer = await rawRequest(
      t,
      'POST',
      '/api/leaderboard/optin',
      {
        host: `commons.internal:${port}`,
        origin: `http://commons.internal:${port}`,
        'sec-fetch-site': 'same-origin',
        cookie: coreCookie,
        'content-type': 'application/json',
      },
      JSON.stringify({ optIn: false }),
    );
    assert.equal(answer.status, 200, answer.text);
    assert.equal(JSON.parse(answer.text).optIn, false);
  });

  test('a bearer call with a foreign Origin is not affected, even with a session cookie beside it', async () => {
    const member = await t.member('core');
    const token = await t.token(member, ['resources:book']);
    for (const [hour, cookie] of [
      [13, undefined],
      [14, coreCookie],
    ] as const) {
      const booked = await t.call('POST', '/api/resources/book', {
        token,
        headers: { origin: EVIL, 'sec-fetch-site': 'cross-site', ...(cookie ? { cookie } : {}) },
        body: slotOn(day, hour),
      });
      assert.equal(booked.status, 202, booked.text);
      const row = await t.deps.db
        .selectFrom('bookings')
        .selectAll()
        .where('id', '=', booked.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.member_id, member.id, 'booked for the bearer');
    }
  });
});

describe('HTML form posts refuse other sites too', () => {
  let t: TestApp;
  let cookie: string;
  let csrf: string;
  let memberId: string;
  before(async () => {
    t = await startTestApp();
    const member = await t.member('member', 'Mina');
    memberId = member.id;
    const session = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}`;
    // A page hands out the CSRF token of its forms.
    ({ csrf, cookie } = await csrfOfPage(t, session));
  });
  after(() => t?.close());

  const post = (path: string, form: Record<string, string>, headers: Record<string, string>) =>
    fetch(t.baseUrl + path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers },
      body: new URLSearchParams(form).toString(),
    });

  test('every form route, with a valid CSRF token but a foreign Origin or Sec-Fetch-Site cross-site: 403 page, nothing stored', async () => {
    const forms = appRoutes(t.app).filter(
      (route) =>
        route.methods.includes('POST') &&
        !route.path.startsWith('/api/') &&
        !route.path.startsWith('/oauth/'),
    );
    assert.ok(forms.length >= 10, `form routes listed by the app (${forms.length})`);
    for (const route of forms) {
      for (const headers of [{ origin: EVIL }, { 'sec-fetch-site': 'cross-site' }] as Record<
        string,
        string
      >[]) {
        const before = await storedState(t);
        const response = await post(route.path, { csrf, tier: 'resident' }, headers);
        const label = `POST ${route.path} ${JSON.stringify(headers)}`;
        assert.equal(response.status, 403, label);
        assert.match(response.headers.get('content-type') ?? '', /^text\/html/, label);
        assert.match(await response.text(), /This form came from another site/, label);
        assert.equal(response.headers.get('x-frame-options'), 'DENY', label);
        assert.equal(await storedState(t), before, `${label}: nothing stored`);
      }
    }
  });

  test('the same form from this origin still works (the tier request is stored)', async () => {
    const refused = await post('/membership/request', { csrf, tier: 'resident' }, { origin: EVIL });
    assert.equal(refused.status, 403);
    const sent = await post(
      '/membership/request',
      { csrf, tier: 'resident' },
      { origin: t.baseUrl, 'sec-fetch-site': 'same-origin' },
    );
    assert.equal(sent.status, 303);
    const rows = await t.deps.db
      .selectFrom('tier_requests')
      .selectAll()
      .where('member_id', '=', memberId)
      .execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].tier, 'resident');
  });

  test('device clients of the OAuth facade are not browsers and are not refused', async () => {
    const response = await fetch(`${t.baseUrl}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: EVIL, cookie },
      body: 'scope=read:public&client_id=cli',
    });
    assert.equal(response.status, 200);
    assert.match((await response.json()).device_code, /./);
  });
});

describe("every form's CSRF token belongs to the session that was given it", () => {
  let t: TestApp;
  let mina: { csrf: string; cookie: string };
  let omar: { csrf: string; cookie: string };
  let minaSession: string;
  before(async () => {
    t = await startTestApp();
    const sessionOf = async (name: string) =>
      `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, (await t.member('member', name)).id)}`;
    minaSession = await sessionOf('Mina');
    mina = await csrfOfPage(t, minaSession);
    omar = await csrfOfPage(t, await sessionOf('Omar'));
  });
  after(() => t?.close());

  /** Mina's session cookie with a CSRF cookie (when the pair has one) and a CSRF field. */
  const post = (path: string, csrfCookie: string | undefined, field: string) =>
    fetch(t.baseUrl + path, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: t.baseUrl,
        'sec-fetch-site': 'same-origin',
        cookie: csrfCookie ? `${minaSession}; ${csrfCookie}` : minaSession,
      },
      body: new URLSearchParams({ csrf: field, tier: 'resident', email: 'x@test.example' }).toString(),
    });

  test("every form route refuses another member's pair and an invented one: 403 page, nothing stored", async () => {
    const forms = appRoutes(t.app).filter(
      (route) =>
        route.methods.includes('POST') &&
        !route.path.startsWith('/api/') &&
        !route.path.startsWith('/oauth/'),
    );
    assert.ok(forms.length >= 10, `form routes listed by the app (${forms.length})`);
    const omarsCookie = omar.cookie.split('; ').find((pair) => pair.startsWith('__csrf='));
    const invented = 'csrf_0123456789abcdef0123456789abcdef0123456789abcdef';
    for (const route of [...forms, { path: '/oauth/consent' }]) {
      for (const [label, csrfCookie, field] of [
        ["Omar's pair", omarsCookie, omar.csrf],
        ['an invented pair', `__csrf=${invented}`, invented],
      ] as const) {
        const before = await storedState(t);
        const response = await post(route.path, csrfCookie, field);
        const text = await response.text();
        assert.equal(response.status, 403, `POST ${route.path} with ${label}: ${text.slice(0, 200)}`);
        assert.match(text, /This form has expired/, `POST ${route.path} with ${label}`);
        assert.equal(await storedState(t), before, `POST ${route.path} with ${label}: nothing stored`);
      }
    }
    const own = await post('/membership/request', undefined, mina.csrf);
    assert.equal(own.status, 303, "Mina's own token is accepted");
  });
});
