import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { setMemberTier } from '../../src/domain/members/members.ts';
import type { TestApp } from './app.ts';

/** A raw JSON-RPC 2.0 client for /api/a2a on a test app: post a body, call a method, send a task. */
export function a2aClient(app: () => TestApp, headers: Record<string, string> = {}) {
  const post = (body: unknown, token?: string) => app().call('POST', '/api/a2a', { body, token, headers });
  const rpc = (method: string, params?: unknown, token?: string, id: string | number = 1) =>
    post({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }, token);
  const send = (capability: string, args: unknown, token?: string, extra: Record<string, unknown> = {}) =>
    rpc('tasks/send', { capability, arguments: args, ...extra }, token);
  return { post, rpc, send };
}

/** The Error body inside a JSON-RPC error's `data`: as is (0.3), or the typed detail holding it (1.0). */
export function errorBody(data: unknown): Record<string, any> | undefined {
  if (Array.isArray(data)) return data.find((d) => typeof d?.error === 'string');
  return data as Record<string, any> | undefined;
}

export const BAD_TOKEN = `agt_${'A'.repeat(43)}`;

/** A highlight story nobody submitted yet (its id is checked in storage after a refusal). */
export function freshStory(tag: string) {
  return {
    id: `2026-07-16-${tag}-${randomUUID().slice(0, 8)}`,
    member_name: 'Ada Example',
    event_title: 'Community meetup',
    dek: 'Ada gave a talk about tidy databases.',
  };
}

/** One refusal a client must see with our message: the call, the JSON-RPC code, the Error body's `error`. */
export interface Refusal {
  name: string;
  capability: string;
  args: Record<string, unknown>;
  token?: string;
  code: number;
  error: string;
  /** The story whose absence proves a refused write stored nothing. */
  storyId?: string;
}

/**
 * The refusals A2A must tell apart, set up on a test app: no token, bad token, missing scope, lower tier,
 * not found, validation, rate limit (the highlight quota of 3 a day, spent by `spendQuota`).
 */
export async function refusals(
  t: TestApp,
): Promise<{ cases: Refusal[]; spendQuota: () => Promise<Refusal> }> {
  const core = await t.member('core');
  const token = await t.token(core, ['events:submit_recap']);
  const unscoped = await t.token(core, ['read:public']);
  const lower = await t.member('core');
  const lowerToken = await t.token(lower, ['events:submit_recap']);
  await setMemberTier(t.deps.db, t.clock, t.deps.tiers, lower.id, 'member');
  const write = (name: string, code: number, error: string, withToken?: string, extra = {}): Refusal => {
    const story = { ...freshStory(name.replace(/\W+/g, '-')), ...extra };
    return {
      name,
      capability: 'ic_highlights_submit',
      args: story,
      token: withToken,
      code,
      error,
      storyId: story.id,
    };
  };
  const cases: Refusal[] = [
    write('no token', -31401, 'missing_token'),
    write('bad token', -31401, 'invalid_token', BAD_TOKEN),
    write('missing scope', -31403, 'insufficient_scope', unscoped),
    write('lower tier', -31403, 'tier_insufficient', lowerToken),
    {
      name: 'not found',
      capability: 'ic_highlights_status',
      args: { id: 'never-submitted' },
      token,
      code: -31404,
      error: 'unknown_story',
    },
    write('validation', -32602, 'invalid_story', token, { images: ['data:,x'] }),
  ];
  const quotaToken = await t.token(await t.member('core'), ['events:submit_recap']);
  const spendQuota = async () => {
    for (let i = 0; i < 3; i++) {
      const ok = await a2aClient(() => t).send('ic_highlights_submit', freshStory('quota'), quotaToken);
      if (!ok.body.result?.ok) throw new Error(`quota setup failed: ${ok.text}`);
    }
    return write('rate limit', -31429, 'rate_limited', quotaToken);
  };
  return { cases, spendQuota };
}

export async function storedStory(t: TestApp, id: string) {
  return t.deps.db.selectFrom('highlights').select('id').where('id', '=', id).executeTakeFirst();
}

/**
 * Makes the database refuse every new A2A task row (a trigger, as a full disk or a constraint
 * would), so a call's task cannot be kept after its operation committed; returns the undo.
 */
export async function refuseTaskRows(t: TestApp): Promise<() => Promise<void>> {
  const sqlite = t.deps.database.engine === 'sqlite';
  const refuse = sqlite
    ? [
        "create trigger refuse_tasks before insert on a2a_tasks begin select raise(abort, 'no room for tasks'); end",
      ]
    : [
        "create function refuse_tasks() returns trigger language plpgsql as $$ begin raise exception 'no room for tasks'; end $$",
        'create trigger refuse_tasks before insert on a2a_tasks for each row execute function refuse_tasks()',
      ];
  const allow = sqlite
    ? ['drop trigger refuse_tasks']
    : ['drop trigger refuse_tasks on a2a_tasks', 'drop function refuse_tasks()'];
  for (const statement of refuse) await sql.raw(statement).execute(t.deps.db);
  return async () => {
    for (const statement of allow) await sql.raw(statement).execute(t.deps.db);
  };
}
