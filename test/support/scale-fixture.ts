// A community grown to a given size, written straight into a migrated database by bulk inserts:
// every row shaped as the service writes it (src/storage's repositories), so the reads that grow
// with their tables can be timed and explained at S and at L. SQLite: one prepared statement run in
// a loop inside one transaction; PostgreSQL: batches of rows sent as arrays and unnested, in one
// transaction, so a million rows cost seconds rather than a million round trips.
import { createHash } from 'node:crypto';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { activityIdPrefix } from '../../src/storage/activity.ts';
import type { EngineName } from './databases.ts';

export interface ScaleSize {
  name: string;
  /** Rows of activity, event log, highlights, feedback and idempotency, each. */
  rows: number;
  tokens: number;
  members: number;
}

export const SIZE_S: ScaleSize = { name: 'S', rows: 1_000, tokens: 100, members: 1_000 };

/** L: 10^6 rows and tokens, 10^5 members; SCALE_L_ROWS scales it down (tokens with it, members a tenth). */
export function sizeL(env: NodeJS.ProcessEnv = process.env): ScaleSize {
  const rows = Number(env.SCALE_L_ROWS ?? 1_000_000);
  if (!Number.isSafeInteger(rows) || rows < 10_000)
    throw new Error('SCALE_L_ROWS is a whole number, 10000 or more');
  return { name: 'L', rows, tokens: rows, members: Math.max(1_000, Math.floor(rows / 10)) };
}

/** The members the reads are made as; every other row belongs to a generated member. */
export const SCALE_OPERATOR = { id: 'mem_scale_operator', tier: 'operator', name: 'Scale Operator' };
export const SCALE_MEMBER = { id: 'mem_scale_member', tier: 'core', name: 'Scale Member' };
/** The type the filtered event-log poll waits for: one record in ten thousand of the member's log. */
export const RARE_TYPE = 'tier_approved';
/** A word every listed profile holds, and one a few hold. */
export const COMMON_WORD = 'maker';
export const RARE_WORD = 'glassblower';

const DAY = 86_400_000;
/** Rows span the 60 days before `now`. */
const SPAN = 60 * DAY;

const hex = (seed: string, length = 64) => createHash('sha256').update(seed).digest('hex').slice(0, length);
const memberId = (i: number) => `mem_${i.toString(16).padStart(16, '0')}`;

interface TableFill {
  table: string;
  columns: string[];
  /** PostgreSQL array types of the columns, for unnest. */
  types: string[];
  count: number;
  row(i: number): unknown[];
}

function fills(size: ScaleSize, now: number, engine: EngineName): TableFill[] {
  const at = (i: number, count: number) => now - SPAN + Math.floor(((i + 1) * SPAN) / (count + 1));
  const generated = size.members - 2;
  const owner = (i: number) => memberId(i % generated);
  const words = ['robots', 'textiles', 'radio', 'bikes', 'gardens', 'printing', 'code', 'music'];
  const members: TableFill = {
    table: 'members',
    columns: ['id', 'email', 'name', 'handle', 'tier', 'created_at', 'updated_at'],
    types: ['text', 'text', 'text', 'text', 'text', 'bigint', 'bigint'],
    count: size.members,
    row(i) {
      const special = i === generated ? SCALE_OPERATOR : i === generated + 1 ? SCALE_MEMBER : undefined;
      const id = special?.id ?? memberId(i);
      const name = special?.name ?? `Member ${i}`;
      const created = at(i, size.members);
      return [id, `m${i}@scale.example`, name, `member-${i}`, special?.tier ?? 'member', created, created];
    },
  };
  const profileColumns = ['member_id', 'bio', 'skills', 'projects', 'visibility', 'show_email', 'updated_at'];
  const profiles: TableFill = {
    table: 'member_profiles',
    columns: engine === 'postgres' ? [...profileColumns, 'search_text'] : profileColumns,
    types: ['text', 'text', 'text', 'text', 'text', 'integer', 'bigint', 'text'],
    count: generated,
    row(i) {
      const bio = `${COMMON_WORD} of ${words[i % words.length]}${i % 5_000 === 0 ? ` and ${RARE_WORD}` : ''}`;
      const skills = `${words[(i + 3) % words.length]}, ${words[(i + 5) % words.length]}`;
      const projects = `project ${i}`;
      const row = [memberId(i), bio, skills, projects, 'members', i % 2, at(i, generated)];
      return engine === 'postgres'
        ? [...row, [`Member ${i}`, `member-${i}`, bio, skills, projects].join(' ')]
        : row;
    },
  };
  const tokens: TableFill = {
    table: 'tokens',
    columns: [
      'id',
      'member_id',
      'hash',
      'prefix',
      'name',
      'scopes',
      'sandbox',
      'source',
      'created_at',
      'last_used_at',
      'revoked_at',
    ],
    types: ['text', 'text', 'text', 'text', 'text', 'text', 'integer', 'text', 'bigint', 'bigint', 'bigint'],
    count: size.tokens,
    row(i) {
      const created = at(i, size.tokens);
      return [
        `tok_${i.toString(16).padStart(16, '0')}`,
        owner(i),
        hex(`token ${i}`),
        `agt_${hex(`prefix ${i}`, 6)}`,
        'agent',
        '["read:public","membership:read"]',
        i % 10 === 0 ? 1 : 0,
        'device',
        created,
        i % 3 === 0 ? created + DAY : null,
        i % 7 === 0 ? created + 2 * DAY : null,
      ];
    },
  };
  const operations = [
    'listUpcomingEvents',
    'getMyActivity',
    'searchDirectory',
    'submitHighlight',
    'rsvpEvent',
  ];
  const surfaces = ['rest', 'mcp', 'a2a', 'batch'];
  const activity: TableFill = {
    table: 'activity',
    columns: ['id', 'member_id', 'at', 'operation', 'surface', 'token_prefix', 'status', 'outcome', 'target'],
    types: ['text', 'text', 'bigint', 'text', 'text', 'text', 'integer', 'text', 'text'],
    count: size.rows,
    row(i) {
      const when = at(i, size.rows);
      const refused = i % 20 === 0;
      return [
        `${activityIdPrefix(when)}${hex(`activity ${i}`, 10)}`,
        owner(i),
        when,
        operations[i % operations.length],
        surfaces[i % surfaces.length],
        `agt_${hex(`prefix ${i % size.tokens}`, 6)}`,
        refused ? 403 : 200,
        refused ? 'insufficient_scope' : 'ok',
        null,
      ];
    },
  };
  // Half the log is the member's own (the reader whose filtered poll is timed), the rest spread.
  const own = Math.floor(size.rows / 2);
  const common = ['token_minted', 'rsvp_confirmed', 'booking_confirmed', 'highlight_approved'];
  const eventLog: TableFill = {
    table: 'event_log',
    columns: ['recipient_id', 'id', 'type', 'at', 'actor', 'target', 'payload', 'actions'],
    types: ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text'].map((t, c) =>
      c === 3 ? 'bigint' : t,
    ),
    count: size.rows,
    row(i) {
      const mine = i < own;
      const recipient = mine ? SCALE_MEMBER.id : owner(i - own);
      const id = mine ? i + 1 : Math.floor((i - own) / generated) + 1;
      const type = mine && i % 10_000 === 9_999 ? RARE_TYPE : common[i % common.length];
      return [recipient, id, type, at(i, size.rows), '{"kind":"agent"}', `{"record":${i}}`, '{}', '[]'];
    },
  };
  const spread = size.rows - own;
  const heads: TableFill = {
    table: 'event_log_heads',
    columns: ['recipient_id', 'last_id'],
    types: ['text', 'bigint'],
    count: Math.min(generated, spread) + 1,
    row(i) {
      if (i === Math.min(generated, spread)) return [SCALE_MEMBER.id, own];
      return [memberId(i), Math.floor(spread / generated) + (i < spread % generated ? 1 : 0)];
    },
  };
  // One story and one ticket in twenty wait for an operator (at S a queue's first page is full, as at
  // L: the two sizes render the same page); the rest were decided.
  const highlights: TableFill = {
    table: 'highlights',
    columns: [
      'id',
      'member_id',
      'token_id',
      'story',
      'status',
      'submitted_at',
      'updated_at',
      'expires_at',
      'decided_at',
      'decided_by',
    ],
    types: ['text', 'text', 'text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'bigint', 'text'],
    count: size.rows,
    row(i) {
      const submitted = at(i, size.rows);
      const status = i % 20 === 0 ? 'pending' : i % 20 === 10 ? 'rejected' : 'active';
      const decided = status === 'pending' ? null : submitted + 3_600_000;
      const id = `2026-07-01-story-${i}`;
      const story = JSON.stringify({
        id,
        member_name: `Member ${i % generated}`,
        member_id: owner(i),
        action: 'spoke',
        event_title: 'Community meetup',
        event_url: 'https://events.example.org/meetup-42',
        date: '2026-07-01',
        dek: `Story ${i} about tidy databases.`,
      });
      // Pending stories stay in the queue for 30 days from their last update.
      const expires = status === 'pending' ? now + 30 * DAY : submitted + 30 * DAY;
      return [
        id,
        owner(i),
        `tok_${(i % size.tokens).toString(16).padStart(16, '0')}`,
        story,
        status,
        submitted,
        decided ?? submitted,
        expires,
        decided,
        status === 'pending' ? null : SCALE_OPERATOR.id,
      ];
    },
  };
  const feedback: TableFill = {
    table: 'feedback',
    columns: [
      'ticket_id',
      'member_id',
      'token_id',
      'category',
      'category_text',
      'priority',
      'message',
      'url',
      'expected',
      'got',
      'agent_id',
      'contact',
      'ip_hash',
      'warnings',
      'status',
      'created_at',
    ],
    types: [
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'text',
      'bigint',
    ],
    count: size.rows,
    row(i) {
      const created = at(i, size.rows);
      const stamp = new Date(created).toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
      return [
        `fb_${stamp}_${hex(`ticket ${i}`, 12)}`,
        i % 2 ? owner(i) : null,
        null,
        'bug',
        null,
        i % 9 === 0 ? 'high' : 'normal',
        `The page ${i} did not load.`,
        'https://commons.example/events',
        null,
        null,
        null,
        null,
        hex(`ip ${i % 5_000}`),
        '[]',
        i % 20 === 0 ? 'open' : 'resolved',
        created,
      ];
    },
  };
  const idempotency: TableFill = {
    table: 'idempotency',
    columns: ['key_hash', 'fingerprint', 'state', 'status', 'headers', 'body', 'created_at', 'expires_at'],
    types: ['text', 'text', 'text', 'integer', 'text', 'text', 'bigint', 'bigint'],
    count: size.rows,
    row(i) {
      const created = at(i, size.rows);
      return [
        hex(`key ${i}`),
        hex(`fingerprint ${i}`),
        'done',
        200,
        '{"content-type":"application/json"}',
        '{"ok":true}',
        created,
        created + DAY,
      ];
    },
  };
  return [members, profiles, tokens, activity, eventLog, heads, highlights, feedback, idempotency];
}

/** Fills a migrated, empty database to `size`, rows dated before `now`: how long each table took (ms). */
export async function fillScale(
  engine: EngineName,
  url: string,
  size: ScaleSize,
  now: number,
): Promise<Record<string, number>> {
  const took: Record<string, number> = {};
  const tables = fills(size, now, engine);
  if (engine === 'sqlite') {
    const sqlite = new SQLite(url.slice('sqlite:'.length));
    try {
      // A build, not a service: nothing to recover if it stops halfway, so no journal and a cache
      // that holds the indexes being filled (random keys would otherwise cost a read per insert).
      sqlite.pragma('journal_mode = OFF');
      sqlite.pragma('synchronous = OFF');
      sqlite.pragma('cache_size = -1000000');
      for (const fill of tables) {
        const started = performance.now();
        const insert = sqlite.prepare(
          `insert into ${fill.table} (${fill.columns.join(', ')}) values (${fill.columns.map(() => '?').join(', ')})`,
        );
        // The migrations' secondary indexes are dropped for the fill and built again after it: one
        // sorted build costs far less than a million random inserts into each.
        const indexes = sqlite
          .prepare(
            `select name, sql from sqlite_master where type = 'index' and tbl_name = ? and sql is not null`,
          )
          .all(fill.table) as { name: string; sql: string }[];
        sqlite.transaction(() => {
          for (const index of indexes) sqlite.exec(`drop index ${index.name}`);
          for (let i = 0; i < fill.count; i++) insert.run(fill.row(i));
          for (const index of indexes) sqlite.exec(index.sql);
        })();
        took[fill.table] = Math.round(performance.now() - started);
      }
      // The FTS index the directory module keeps in step with each listed profile.
      const started = performance.now();
      sqlite.exec(`insert into directory_fts (member_id, name, bio, skills, projects)
        select m.id, m.name || ' ' || m.handle, p.bio, p.skills, p.projects
        from member_profiles p join members m on m.id = p.member_id where p.visibility = 'members'`);
      took.directory_fts = Math.round(performance.now() - started);
      sqlite.exec('analyze');
      sqlite.pragma('journal_mode = WAL');
    } finally {
      sqlite.close();
    }
    return took;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('begin');
    for (const fill of tables) {
      const started = performance.now();
      const batch = 20_000;
      // As on SQLite: secondary indexes (not those backing a key or a unique constraint) are
      // built again after the fill.
      const indexes = await client.query<{ name: string; definition: string }>(
        `select i.indexname as name, i.indexdef as definition from pg_indexes i
         where i.tablename = $1 and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
        [fill.table],
      );
      for (const index of indexes.rows) await client.query(`drop index ${index.name}`);
      const text = `insert into ${fill.table} (${fill.columns.join(', ')}) select * from unnest(${fill.columns
        .map((_, c) => `$${c + 1}::${fill.types[c]}[]`)
        .join(', ')})`;
      for (let from = 0; from < fill.count; from += batch) {
        const arrays: unknown[][] = fill.columns.map(() => []);
        for (let i = from; i < Math.min(fill.count, from + batch); i++) {
          const row = fill.row(i);
          for (let c = 0; c < row.length; c++) arrays[c].push(row[c]);
        }
        await client.query(text, arrays);
      }
      for (const index of indexes.rows) await client.query(index.definition);
      took[fill.table] = Math.round(performance.now() - started);
    }
    await client.query('commit');
    // A years-old database has been vacuumed by autovacuum long since; left to it, the vacuum of
    // freshly loaded tables would run beside the reads being measured and set their visibility
    // maps only partway.
    await client.query('vacuum analyze');
  } finally {
    await client.end();
  }
  return took;
}
