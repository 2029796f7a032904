import { MS } from '../../clock.ts';
import type { Deps } from '../../deps.ts';
import { createMember } from '../members/members.ts';

const DEMO_MEMBERS = [
  { name: 'Pat Public', email: 'pat@demo.example.org', tier: 'public', handle: 'pat' },
  { name: 'Mina Member', email: 'mina@demo.example.org', tier: 'member', handle: 'mina' },
  { name: 'Rae Resident', email: 'rae@demo.example.org', tier: 'resident', handle: 'rae' },
  { name: 'Cory Core', email: 'cory@demo.example.org', tier: 'core', handle: 'cory' },
  { name: 'Olga Operator', email: 'olga@demo.example.org', tier: 'operator', handle: 'olga' },
];

const DEMO_EVENTS = [
  { slug: 'open-hack-night', title: 'Open Hack Night', inDays: 2, hours: 3, location: 'Main hall' },
  {
    slug: 'agents-reading-group',
    title: 'Agents Reading Group',
    inDays: 5,
    hours: 2,
    location: 'Library room',
  },
  { slug: 'demo-day', title: 'Member Demo Day', inDays: 12, hours: 4, location: 'Main hall' },
];

const DEMO_RESOURCES = [
  { id: 'room-library', kind: 'room', name: 'Library room', capacity: 8 },
  { id: 'room-main-hall', kind: 'room', name: 'Main hall', capacity: 60 },
  { id: 'printer-3d', kind: 'printer', name: '3D printer', capacity: 1 },
];

const DEMO_CORPUS = [
  {
    id: 'doc-device-flow',
    source: 'paper',
    title: 'Device authorization for input-constrained clients',
    authors: 'Demo Community',
    body: 'An agent without a browser asks the service for a device code and a short user code. The human enters the user code on a trusted device and approves; the agent polls until the token is issued.',
  },
  {
    id: 'doc-community-handbook',
    source: 'book',
    title: 'Community handbook',
    authors: 'Demo Community',
    body: 'Members book rooms through the front desk or their agents. Events are announced a week ahead. Highlights from events are moderated before they are published.',
  },
];

/** A small community so every endpoint answers something real on a fresh install. */
export async function seedDemoCommunity(deps: Deps): Promise<void> {
  const now = deps.clock.now();
  for (const member of DEMO_MEMBERS) {
    if (!deps.tiers.has(member.tier)) continue;
    await createMember(deps.db, deps.clock, deps.tiers, member);
  }
  for (const [index, event] of DEMO_EVENTS.entries()) {
    const start = now - (now % MS.hour) + event.inDays * MS.day;
    await deps.db
      .insertInto('events')
      .values({
        id: `evt_demo_${index + 1}`,
        platform_url: `https://events.example.org/${event.slug}`,
        title: event.title,
        start_at: start,
        end_at: start + event.hours * MS.hour,
        location: event.location,
        cover_url: null,
        description: `${event.title} at the demo community.`,
        updated_at: now,
      })
      .execute();
  }
  for (const resource of DEMO_RESOURCES) {
    await deps.db
      .insertInto('resources')
      .values({
        ...resource,
        open_hours: JSON.stringify({ weekdays: '09:00-21:00', weekends: '10:00-18:00' }),
        bookable: 1,
      })
      .execute();
  }
  for (const doc of DEMO_CORPUS) {
    await deps.db
      .insertInto('corpus_documents')
      .values({ ...doc, year: 2026, url: null, added_at: now })
      .execute();
  }
}
