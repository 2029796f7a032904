import { fileURLToPath } from 'node:url';
import { MS } from '../../clock.ts';
import { events } from '../../storage/events.ts';
import { underFirstRunLock } from '../../storage/first-run-lock.ts';
import { isFreshDatabase } from '../../storage/migrations.ts';
import { donations } from '../../storage/payments.ts';
import { resources } from '../../storage/resources.ts';
import type { WritePort } from '../../storage/transactions.ts';
import type { Tiered } from '../access/tiers.ts';
import { readContentFolder } from '../content/folder.ts';
import { importContent } from '../content/import.ts';
import { markRefreshed } from '../events/events.ts';
import { saveProfile } from '../members/directory.ts';
import { createMember } from '../members/members.ts';
import type { Clocked, Configured, OnDatabase, Store } from '../ports.ts';
import { ingest } from '../research/corpus.ts';
import { fetchSource } from '../research/read-source.ts';
import { realCorpusFiles } from '../research/real-corpus.ts';

const DEMO_MEMBERS = [
  { name: 'Pat Public', email: 'pat@demo.example.org', tier: 'public', handle: 'pat', profile: undefined },
  {
    name: 'Mina Member',
    email: 'mina@demo.example.org',
    tier: 'member',
    handle: 'mina',
    profile: {
      bio: 'Hardware tinkerer and 3D printing enthusiast.',
      skills: 'electronics, 3d printing',
      projects: 'Open door sensor',
    },
  },
  {
    name: 'Rae Resident',
    email: 'rae@demo.example.org',
    tier: 'resident',
    handle: 'rae',
    profile: {
      bio: 'Researcher working on retrieval for small corpora.',
      skills: 'python, information retrieval',
      projects: 'Community reading list',
    },
  },
  {
    name: 'Cory Core',
    email: 'cory@demo.example.org',
    tier: 'core',
    handle: 'cory',
    profile: {
      bio: 'Runs the Thursday hack night.',
      skills: 'typescript, community organising',
      projects: 'agent-commons',
    },
  },
  {
    name: 'Olga Operator',
    email: 'olga@demo.example.org',
    tier: 'operator',
    handle: 'olga',
    profile: undefined,
  },
];

const DEMO_DONATIONS = [
  {
    donor_name: 'Ada L.',
    amount_cents: 5000,
    message: 'For the 3D printer filament.',
    public: 1,
    daysAgo: 9,
  },
  { donor_name: 'Anonymous', amount_cents: 2000, message: null, public: 0, daysAgo: 4 },
  {
    donor_name: 'Grace H.',
    amount_cents: 2500,
    message: 'Keep the hack nights going!',
    public: 1,
    daysAgo: 1,
  },
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

/** The demo content folder shipped in the repository (written for the demo, not real news). */
export const DEMO_CONTENT_DIR = fileURLToPath(new URL('../../../content/', import.meta.url));

/** What seeding writes through: every store the demo fills. */
type SeedPort = Store &
  Clocked &
  Tiered &
  OnDatabase &
  WritePort &
  Configured<'seedDemo' | 'eventUrlHosts' | 'research'>;

/**
 * The corpus shipped in the repository (an RFC and the project's guides), and the Debian documents
 * when this machine has them: research answers on any fresh install, with no download.
 */
async function seedCorpus(deps: SeedPort): Promise<void> {
  for (const file of realCorpusFiles('demo'))
    await ingest(deps, await fetchSource(file.path, deps.config.research), file.metadata);
}

/**
 * Seeds the demo community into a database with no members yet, when SEED_DEMO is on; says whether it
 * did. Instances starting together on a new database seed it once: the first to take the first-run
 * lock seeds, the others then find members and leave it.
 */
export async function seedNewDatabase(deps: SeedPort): Promise<boolean> {
  if (!deps.config.seedDemo || !(await isFreshDatabase(deps.db))) return false;
  return underFirstRunLock(deps.database, async () => {
    if (!(await isFreshDatabase(deps.db))) return false;
    await seedDemoCommunity(deps);
    return true;
  });
}

/** A small community so every endpoint answers something real on a fresh install. */
export async function seedDemoCommunity(deps: SeedPort): Promise<void> {
  const now = deps.clock.now();
  for (const { profile, ...member } of DEMO_MEMBERS) {
    if (!deps.tiers.has(member.tier)) continue;
    const created = await createMember(deps.db, deps.clock, deps.tiers, member);
    if (profile) await saveProfile(deps, created.id, { ...profile, visibility: 'members', showEmail: false });
  }
  for (const [index, donation] of DEMO_DONATIONS.entries()) {
    const { daysAgo, ...values } = donation;
    await donations.insert(deps.db, {
      id: `don_demo_${index + 1}`,
      ...values,
      source: 'demo',
      created_at: now - daysAgo * MS.day,
    });
  }
  await markRefreshed(deps.db, now);
  for (const [index, event] of DEMO_EVENTS.entries()) {
    const start = now - (now % MS.hour) + event.inDays * MS.day;
    await events.insert(deps.db, {
      id: `evt_demo_${index + 1}`,
      platform_url: `https://${deps.config.eventUrlHosts[0]}/${event.slug}`,
      title: event.title,
      start_at: start,
      end_at: start + event.hours * MS.hour,
      location: event.location,
      cover_url: null,
      description: `${event.title} at the demo community.`,
      updated_at: now,
      source: 'local',
    });
  }
  for (const resource of DEMO_RESOURCES) {
    await resources.insert(deps.db, {
      ...resource,
      open_hours: JSON.stringify({ weekdays: '09:00-21:00', weekends: '10:00-18:00' }),
      bookable: 1,
    });
  }
  await seedCorpus(deps);
  await importContent(deps, readContentFolder(DEMO_CONTENT_DIR));
}
