// The events and bookings pages in Chromium: a member RSVPs, withdraws, proposes an event, books a
// room and cancels it from the pages, and each stores the rows an agent's REST call stores; the
// booking cancel operation's rule (owner yes, other member no, operator yes) over REST and MCP; axe
// on the new pages at phone and desktop width.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { MS } from '../src/clock.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import type { Member } from '../src/domain/members/members.ts';
import { settleQueuedBookings } from '../src/domain/resources/booking-settlement.ts';
import { saveResource } from '../src/domain/resources/resources.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { cacheEvent, loggedEvents, tokenIdOf } from './support/community.ts';
import { engines } from './support/databases.ts';
import { contextFor, screenshots, violations, WIDTHS } from './support/pages-in-chromium.ts';

const ALWAYS = { weekdays: '00:00-24:00', weekends: '00:00-24:00' };

/** Midnight UTC of a Wednesday at least a week after `now`. */
function aWednesdayAhead(now: number): number {
  const midnight = now - (now % MS.day) + 7 * MS.day;
  const weekday = new Date(midnight).getUTCDay();
  return midnight + ((3 - weekday + 7) % 7) * MS.day;
}

/** Presses Tab until the focused control's text is `label` (at most 60 times), with focus visible. */
async function tabTo(page: Page, label: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const active = document.activeElement as HTMLElement | null;
      return {
        text: active?.textContent?.trim() ?? '',
        outline: active ? getComputedStyle(active).outlineStyle : 'none',
      };
    });
    if (focused.text === label) {
      assert.notEqual(focused.outline, 'none', `focus on ${label} is visible`);
      return;
    }
  }
  assert.fail(`Tab never reached ${label}`);
}

/** A stored row without what differs between two callers' rows by nature (ids, who, when). */
function shapeOf(row: Record<string, unknown>, drop: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([key]) => !drop.includes(key)));
}

for (const engine of engines) {
  describe(`booking cancel: REST and MCP, who may (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let day: number;
    const clients: Client[] = [];
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      day = aWednesdayAhead(t.clock.now());
      await saveResource(t.deps.db, {
        id: 'room-c',
        kind: 'room',
        name: 'Room C',
        capacity: 4,
        openHours: ALWAYS,
        bookable: true,
      });
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await t?.close();
    });

    async function mcp(token: string, name: string, args: Record<string, unknown>) {
      const client = new Client({ name: 'agent-commons-tests', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      const result = await client.callTool({ name, arguments: args });
      return { isError: result.isError, body: result.structuredContent as Record<string, any> };
    }
    let hour = 0;
    async function booked(token: string): Promise<string> {
      hour += 1;
      const answer = await t.call('POST', '/api/resources/book', {
        token,
        body: {
          resource_id: 'room-c',
          start_iso: new Date(day + hour * MS.hour).toISOString(),
          end_iso: new Date(day + (hour + 1) * MS.hour).toISOString(),
          email: 'owner@test.example',
        },
      });
      assert.equal(answer.status, 202);
      return answer.body.id;
    }
    const statusOf = async (id: string) =>
      await t.deps.db
        .selectFrom('bookings')
        .select(['status', 'reason'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    test('REST: the owner’s token cancels; another member’s gets 404 and nothing changes; a repeat is was_already', async () => {
      const owner = await t.member('core', 'Olga');
      const other = await t.member('core', 'Otto');
      const ownerToken = await t.token(owner, ['resources:book']);
      const otherToken = await t.token(other, ['resources:book']);
      const id = await booked(ownerToken);

      const refused = await t.call('POST', '/api/resources/cancel', {
        token: otherToken,
        body: { booking_id: id },
      });
      assert.equal(refused.status, 404);
      assert.equal(refused.body.error.code ?? refused.body.error, 'booking_not_found');
      assert.equal((await statusOf(id)).status, 'queued');

      const noScope = await t.call('POST', '/api/resources/cancel', {
        token: await t.token(owner, ['resources:read']),
        body: { booking_id: id },
      });
      assert.equal(noScope.status, 403);

      const done = await t.call('POST', '/api/resources/cancel', {
        token: ownerToken,
        body: { booking_id: id },
      });
      assert.equal(done.status, 200);
      assert.deepEqual(
        {
          ok: done.body.ok,
          status: done.body.status,
          was_already: done.body.was_already,
          via: done.body.via,
        },
        { ok: true, status: 'cancelled', was_already: false, via: 'agent' },
      );
      assert.deepEqual(await statusOf(id), { status: 'cancelled', reason: 'cancelled_by_member' });
      const again = await t.call('POST', '/api/resources/cancel', {
        token: ownerToken,
        body: { booking_id: id },
      });
      assert.equal(again.body.was_already, true);
      const [logged] = await loggedEvents(t, owner.id, 'booking_cancelled');
      assert.equal(logged.target.booking_id, id);
      assert.equal(logged.payload.reason, 'cancelled_by_member');

      // A cancelled queued booking is never decided.
      await settleQueuedBookings(t.deps);
      assert.equal((await statusOf(id)).status, 'cancelled');
    });

    test('REST with a session: the owner yes, another member no; an operator’s session cancels anyone’s', async () => {
      const owner = await t.member('core', 'Sara');
      const other = await t.member('core', 'Sven');
      const operator = await t.member('operator', 'Opal');
      const cookie = async (m: Member) => ({
        cookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, m.id)}`,
      });
      const first = await booked(await t.token(owner, ['resources:book']));
      const second = await booked(await t.token(owner, ['resources:book']));
      const byOther = await t.call('POST', '/api/resources/cancel', {
        headers: await cookie(other),
        body: { booking_id: first },
      });
      assert.equal(byOther.status, 404);
      const byOwner = await t.call('POST', '/api/resources/cancel', {
        headers: await cookie(owner),
        body: { booking_id: first },
      });
      assert.equal(byOwner.status, 200);
      assert.equal(byOwner.body.via, 'session');
      const byOperator = await t.call('POST', '/api/resources/cancel', {
        headers: await cookie(operator),
        body: { booking_id: second },
      });
      assert.equal(byOperator.status, 200);
      assert.deepEqual(await statusOf(second), { status: 'cancelled', reason: 'cancelled_by_operator' });
      // An operator's agent needs an operator scope on its token to act as one.
      const third = await booked(await t.token(owner, ['resources:book']));
      const plainOperatorToken = await t.token(operator, ['resources:book']);
      const plain = await t.call('POST', '/api/resources/cancel', {
        token: plainOperatorToken,
        body: { booking_id: third },
      });
      assert.equal(plain.status, 404);
      const adminToken = await t.token(operator, ['resources:book', 'admin:tier_review']);
      const admin = await t.call('POST', '/api/resources/cancel', {
        token: adminToken,
        body: { booking_id: third },
      });
      assert.equal(admin.status, 200);
    });

    test('MCP ic_resources_cancel: the same rule and rows', async () => {
      const owner = await t.member('core', 'Mara');
      const other = await t.member('core', 'Milo');
      const ownerToken = await t.token(owner, ['resources:book']);
      const id = await booked(ownerToken);
      const refused = await mcp(await t.token(other, ['resources:book']), 'ic_resources_cancel', {
        booking_id: id,
      });
      assert.equal(refused.isError, true);
      assert.equal((await statusOf(id)).status, 'queued');
      const done = await mcp(ownerToken, 'ic_resources_cancel', { booking_id: id });
      assert.notEqual(done.isError, true);
      assert.equal(done.body.status, 'cancelled');
      assert.deepEqual(await statusOf(id), { status: 'cancelled', reason: 'cancelled_by_member' });
      const declined = await booked(ownerToken);
      await t.deps.db
        .updateTable('bookings')
        .set({ status: 'declined', reason: 'x' })
        .where('id', '=', declined)
        .execute();
      const conflict = await t.call('POST', '/api/resources/cancel', {
        token: ownerToken,
        body: { booking_id: declined },
      });
      assert.equal(conflict.status, 409);
    });
  });
}

for (const engine of engines.filter((candidate) => candidate.name === 'sqlite')) {
  describe(`events and bookings pages in Chromium (${engine.name})`, {
    skip: skipWithoutChromium || engine.skip,
  }, () => {
    let t: TestApp;
    let browser: Browser;
    let day: number;
    let eventUrl: string;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      day = aWednesdayAhead(t.clock.now());
      eventUrl = await cacheEvent(t, 'launch-party', 72);
      await saveResource(t.deps.db, {
        id: 'room-p',
        kind: 'room',
        name: 'Room P',
        capacity: 6,
        openHours: { weekdays: '08:00-20:00', weekends: 'closed' },
        bookable: true,
      });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    const rsvpRows = (memberId: string) =>
      t.deps.db
        .selectFrom('rsvps')
        .selectAll()
        .where('member_id', '=', memberId)
        .orderBy('created_at')
        .execute();
    const bookingRows = (memberId: string) =>
      t.deps.db
        .selectFrom('bookings')
        .selectAll()
        .where('member_id', '=', memberId)
        .orderBy('created_at')
        .execute();

    test('a member RSVPs and withdraws from the event page: the rows are the ones an agent’s call makes', async () => {
      const member = await t.member('core', 'Rhea');
      const context = await contextFor(t, (o) => browser.newContext(o), member);
      const page = await context.newPage();
      await page.goto(`${t.baseUrl}/events?tz=Europe%2FBerlin`);
      assert.equal(await page.locator('#zone').textContent(), 'Europe/Berlin');
      await page.getByRole('link', { name: 'Event launch-party' }).click();
      assert.match((await page.locator('dl.facts dd').first().textContent()) ?? '', /CET|CEST|GMT\+/);
      // Keyboard only: Tab from the top of the page to the RSVP button and press Enter.
      await tabTo(page, 'RSVP');
      await page.keyboard.press('Enter');
      await page.waitForURL(/#rsvp$/);
      assert.equal(await page.locator('#rsvp-state').getAttribute('data-state'), 'queued');

      const agent = await t.member('core', 'Agent owner');
      const token = await t.token(agent, ['events:rsvp']);
      const rest = await t.call('POST', '/api/events/rsvp', { token, body: { event_url: eventUrl } });
      assert.equal(rest.status, 202);
      const [fromPage] = await rsvpRows(member.id);
      const [fromAgent] = await rsvpRows(agent.id);
      const drop = ['id', 'member_id', 'token_id', 'email', 'name', 'created_at', 'next_attempt_at'];
      assert.deepEqual(shapeOf(fromPage, drop), shapeOf(fromAgent, drop));
      assert.equal(fromPage.event_url, eventUrl);
      assert.equal(fromPage.token_id, null, 'a session has no token');
      assert.equal(fromAgent.token_id, await tokenIdOf(t, token));
      assert.equal(fromPage.email, member.email);

      // A second RSVP is the duplicate an agent's repeat is: no new row.
      const again = await t.call('POST', '/api/events/rsvp', {
        headers: { cookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}` },
        body: { event_url: eventUrl },
      });
      assert.equal(again.body.was_dup, true);
      assert.equal((await rsvpRows(member.id)).length, 1);

      await tabTo(page, 'Withdraw my RSVP');
      await page.keyboard.press('Enter');
      // The address already ends in #rsvp: wait for the answer's page, not for the address.
      await page.locator('#rsvp-state[data-state="cancelled"]').waitFor();
      const withdrawn = await t.call('POST', '/api/events/rsvp/cancel', {
        token,
        body: { event_url: eventUrl },
      });
      assert.equal(withdrawn.body.cancelled, 1);
      assert.deepEqual(
        shapeOf((await rsvpRows(member.id))[0], [...drop, 'settled_at']),
        shapeOf((await rsvpRows(agent.id))[0], [...drop, 'settled_at']),
      );

      const ics = await page.request.get(`${page.url().split('#')[0].split('?')[0]}/calendar.ics`);
      assert.equal(ics.status(), 200);
      assert.match(ics.headers()['content-type'], /^text\/calendar/);
      const text = await ics.text();
      assert.match(text, /BEGIN:VEVENT\r\n/);
      assert.match(text, new RegExp(`UID:${eventUrl.replace(/[.:/]/g, (c) => `\\${c}`)}`));
      const viaApi = await t.call('GET', `/api/events/calendar?url=${encodeURIComponent(eventUrl)}`);
      assert.equal(viaApi.body.ics.replace(/DTSTAMP:\S+/, ''), text.replace(/DTSTAMP:\S+/, ''));
      await context.close();
    });

    test('a member proposes an event from the form: the same pending row an agent’s proposal makes', async () => {
      const member = await t.member('core', 'Pia');
      const context = await contextFor(t, (o) => browser.newContext(o), member);
      const page = await context.newPage();
      await page.goto(`${t.baseUrl}/events/propose`);
      await page.getByLabel('Title (required)').fill('Soldering <night>');
      await page.locator('#p-tz').selectOption('Europe/Berlin');
      const start = new Date(day + 18 * MS.hour);
      const local = start.toISOString().slice(0, 10);
      await page.getByLabel(/^Starts/).fill(`${local}T19:00`);
      await page.getByLabel('Place').fill('Workshop');
      await page.getByRole('button', { name: 'Send the proposal' }).click();
      const id = await page.locator('#proposal-id').textContent();
      const row = await t.deps.db
        .selectFrom('event_requests')
        .selectAll()
        .where('id', '=', id!)
        .executeTakeFirstOrThrow();
      assert.equal(row.member_id, member.id);
      assert.equal(row.status, 'pending');
      assert.equal(row.title, 'Soldering <night>');
      // 19:00 in Berlin in winter or summer is 17:00 or 18:00 UTC.
      const hourUtc = new Date(Number(row.start_at)).getUTCHours();
      assert.ok(hourUtc === 17 || hourUtc === 18, `start ${new Date(Number(row.start_at)).toISOString()}`);
      assert.deepEqual(JSON.parse(row.details), {
        title: 'Soldering <night>',
        start: new Date(Number(row.start_at)).toISOString(),
        location: 'Workshop',
        visibility: 'public',
      });
      await context.close();
    });

    test('a member books a room from the page, sees it confirmed after a refresh and cancels it; rows as an agent’s', async () => {
      const member = await t.member('core', 'Bea');
      const context = await contextFor(t, (o) => browser.newContext(o), member);
      const page = await context.newPage();
      await page.goto(`${t.baseUrl}/resources`);
      const date = new Date(day).toISOString().slice(0, 10);
      await page.locator('#date-room-p').fill(date);
      await page.locator('#from-room-p').fill('10:00');
      await page.locator('#to-room-p').fill('11:30');
      await page.locator('#purpose-room-p').fill('Planning');
      await page.getByRole('button', { name: 'Request Room P' }).click();
      await page.waitForURL(/\/bookings#bkg_/);
      const [stored] = await bookingRows(member.id);
      assert.equal(await page.locator(`tr[id="${stored.id}"]`).getAttribute('data-status'), 'queued');

      const agent = await t.member('core', 'Agent booker');
      const token = await t.token(agent, ['resources:book']);
      const rest = await t.call('POST', '/api/resources/book', {
        token,
        body: {
          resource_id: 'room-p',
          start_iso: new Date(day + 14 * MS.hour).toISOString(),
          end_iso: new Date(day + 15.5 * MS.hour).toISOString(),
          purpose: 'Planning',
          email: agent.email,
        },
      });
      assert.equal(rest.status, 202);
      const [fromAgent] = await bookingRows(agent.id);
      const drop = ['id', 'member_id', 'token_id', 'email', 'created_at', 'start_at', 'end_at'];
      assert.deepEqual(shapeOf(stored, drop), shapeOf(fromAgent, drop));
      assert.equal(Number(stored.start_at), day + 10 * MS.hour);
      assert.equal(
        Number(stored.end_at) - Number(stored.start_at),
        Number(fromAgent.end_at) - Number(fromAgent.start_at),
      );

      await settleQueuedBookings(t.deps);
      await page.getByRole('link', { name: 'Refresh' }).click();
      assert.equal(await page.locator(`tr[id="${stored.id}"]`).getAttribute('data-status'), 'confirmed');
      await page.getByRole('button', { name: `Cancel booking ${stored.id}` }).click();
      await page.waitForURL(/\/bookings$/);
      assert.equal(await page.locator(`tr[id="${stored.id}"]`).getAttribute('data-status'), 'cancelled');
      const cancelled = await t.call('POST', '/api/resources/cancel', {
        token,
        body: { booking_id: fromAgent.id },
      });
      assert.equal(cancelled.status, 200);
      const drop2 = [...drop, 'settled_at', 'locked_until'];
      assert.deepEqual(
        shapeOf((await bookingRows(member.id))[0], drop2),
        shapeOf((await bookingRows(agent.id))[0], drop2),
      );
      await context.close();
    });

    test('the operator sees the day’s bookings and cancels one', async () => {
      const member = await t.member('core', 'Dora');
      const token = await t.token(member, ['resources:book']);
      const rest = await t.call('POST', '/api/resources/book', {
        token,
        body: {
          resource_id: 'room-p',
          start_iso: new Date(day + 8 * MS.hour).toISOString(),
          end_iso: new Date(day + 9 * MS.hour).toISOString(),
          email: member.email,
        },
      });
      const operator = await t.member('operator', 'Otis');
      const context = await contextFor(t, (o) => browser.newContext(o), operator);
      const page = await context.newPage();
      await page.goto(`${t.baseUrl}/operator/bookings?day=${new Date(day).toISOString().slice(0, 10)}`);
      const row = page.locator(`tr[id="${rest.body.id}"]`);
      assert.match((await row.textContent()) ?? '', /Dora/);
      await row.getByRole('button').click();
      await page.waitForURL(/\/operator\/bookings\?day=/);
      assert.equal(await page.locator(`tr[id="${rest.body.id}"]`).getAttribute('data-status'), 'cancelled');
      const member2 = await t.member('core');
      const denied = await contextFor(t, (o) => browser.newContext(o), member2);
      const p2 = await denied.newPage();
      const answer = await p2.goto(`${t.baseUrl}/operator/bookings`);
      assert.equal(answer?.status(), 403);
      await denied.close();
      await context.close();
    });

    test('axe: 0 WCAG 2.1 A/AA violations on the new pages at 390 and 1280 px', async () => {
      const member = await t.member('operator', 'Ada');
      const context = await contextFor(t, (o) => browser.newContext(o), member);
      const page = await context.newPage();
      await t.call('POST', '/api/resources/book', {
        token: await t.token(member, ['resources:book']),
        body: {
          resource_id: 'room-p',
          start_iso: new Date(day + 12 * MS.hour).toISOString(),
          end_iso: new Date(day + 13 * MS.hour).toISOString(),
          email: member.email,
        },
      });
      const paths = [
        '/events',
        '/events?tz=America%2FNew_York',
        '/events/evt_launch-party',
        '/events/propose',
        '/resources',
        '/bookings',
        `/operator/bookings?day=${new Date(day).toISOString().slice(0, 10)}`,
      ];
      const found: string[] = [];
      for (const path of paths) {
        for (const [width, size] of Object.entries(WIDTHS)) {
          await page.setViewportSize(size);
          const answer = await page.goto(t.baseUrl + path);
          assert.equal(answer?.status(), 200, path);
          for (const line of await violations(page)) found.push(`${width} ${path}: ${line}`);
          if (width === 'phone') {
            const overflow = await page.evaluate(
              () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
            );
            if (overflow > 1) found.push(`${path}: scrolls sideways by ${overflow}px on a phone`);
          }
        }
        await screenshots(
          page,
          `${engine.name}/events-bookings`,
          path
            .split('?')[0]
            .replace(/^\/+/, '')
            .replace(/[^A-Za-z0-9]+/g, '-'),
        );
      }
      const signedOut = await browser.newContext();
      const anonymous = await signedOut.newPage();
      for (const [, size] of Object.entries(WIDTHS)) {
        await anonymous.setViewportSize(size);
        await anonymous.goto(`${t.baseUrl}/events/evt_launch-party`);
        for (const line of await violations(anonymous)) found.push(`signed out: ${line}`);
      }
      await signedOut.close();
      await context.close();
      assert.deepEqual(found, [], found.join('\n'));
    });
  });
}
