import assert from 'node:assert/strict';
import { MS } from '../../src/clock.ts';
import { createSession, SESSION_COOKIE } from '../../src/domain/auth/sessions.ts';
import { seedDemoCommunity } from '../../src/domain/demo/seed.ts';
import type { Member } from '../../src/domain/members/members.ts';
import { a2aClient } from './a2a.ts';
import type { TestApp } from './app.ts';
import { Browser } from './browser.ts';
import { story } from './highlight-story.ts';

export interface BusyCommunity {
  operator: Member;
  core: Member;
  /** Calls made per surface, and how many of them were refused. */
  made: { rest: number; a2a: number; refused: number };
  storyIds: string[];
}

/**
 * The demo community with three days of agents at work, every call a real one on the wire: members'
 * tokens calling REST and A2A over three days (some refused for a missing scope), highlight
 * stories, feedback, an event proposal and a tier request waiting for an operator.
 */
export async function busyCommunity(t: TestApp): Promise<BusyCommunity> {
  await seedDemoCommunity(t.deps);
  const operator = await t.member('operator', 'Olive Operator');
  const core = await t.member('core', 'Cleo Core');
  const resident = await t.member('resident', 'Remy Resident');
  const coreToken = await t.token(core, [
    'read:public',
    'membership:read',
    'events:submit_recap',
    'events:request',
  ]);
  const residentToken = await t.token(resident, ['read:public', 'membership:read']);
  const a2a = a2aClient(() => t);
  const made = { rest: 0, a2a: 0, refused: 0 };
  const storyIds: string[] = [];
  for (let day = 0; day < 3; day++) {
    for (let i = 0; i <= day; i++) {
      assert.equal((await t.call('GET', '/api/activity/me', { token: residentToken })).status, 200);
      made.rest++;
    }
    // A write over A2A each day (the activity log keeps what members' tokens change).
    const task = await a2a.send(
      'ic_events_request',
      { title: `Hack night ${day + 1}`, start: new Date(t.clock.now() + 5 * MS.day).toISOString() },
      coreToken,
    );
    assert.equal(task.status, 200, task.text);
    assert.equal(task.body.result?.status?.state ?? 'completed', 'completed', task.text);
    made.a2a++;
    // A scope the token lacks: refused, and logged as a refusal.
    const refused = await t.call('POST', '/api/ingest/highlights/pending', {
      token: residentToken,
      body: story(`refused-${day}`),
    });
    assert.equal(refused.status, 403, refused.text);
    made.rest++;
    made.refused++;
    t.clock.advance(MS.day);
  }
  for (const [i, name] of ['Ada Example', 'Bo Builder'].entries()) {
    const id = `2026-07-1${i + 5}-story-${i}`;
    const filed = await t.call('POST', '/api/ingest/highlights/pending', {
      token: coreToken,
      body: story(id, { member_name: name, dek: `${name} gave a <talk> about tidy databases.` }),
    });
    assert.equal(filed.status, 202, filed.text);
    made.rest++;
    storyIds.push(id);
    t.clock.advance(MS.minute);
  }
  const proposed = await t.call('POST', '/api/events/request', {
    token: coreToken,
    body: {
      title: 'Soldering 101',
      start: new Date(t.clock.now() + 3 * MS.day).toISOString(),
      location: 'Workshop',
      description: 'Bring nothing; we have irons.',
      capacity: 12,
    },
  });
  assert.equal(proposed.status, 202, proposed.text);
  made.rest++;
  const ticket = await t.call('POST', '/api/agent/feedback', {
    body: { message: 'The map page is blank on my phone; I expected the room list.' },
  });
  assert.equal(ticket.status, 201, ticket.text);
  // A tier request, made the way a member makes one: the membership page's form.
  const asking = await browserOf(t, resident);
  await asking.request('GET', '/membership');
  const asked = await asking.request('POST', '/membership/request', {
    tier: 'core',
    note: 'I run the soldering nights.',
    csrf: asking.csrf,
  });
  assert.ok(asked.status < 400, asked.text);
  return { operator, core, made, storyIds };
}

/** A browser already signed in as `member` (its session cookie set), as after the mailed link. */
export async function browserOf(t: TestApp, member: Member): Promise<Browser> {
  const browser = new Browser(t.baseUrl);
  browser.cookies.set(SESSION_COOKIE, await createSession(t.deps.db, t.clock, member.id));
  return browser;
}
