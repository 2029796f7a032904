import { Type } from '@sinclair/typebox';
import { strictObject } from '../../src/operations/schemas.ts';
import { defineOperation } from '../../src/operations/types.ts';

/** A test-only operation: deprecated, aliased, and with markup in its prose to check the escaping. */
export const legacyEcho = defineOperation<{ note?: string }, { ok: boolean; note?: string }>({
  id: 'legacyEcho',
  method: 'GET',
  path: '/api/test/legacy-echo',
  aliases: ['/api/test/old-echo'],
  tag: 'test',
  summary: 'Legacy echo <script>alert("summary")</script>',
  description: 'Echoes a note & "quotes" <img src=x onerror=alert(1)>.',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: strictObject({ note: Type.Optional(Type.String({ maxLength: 20 })) }),
  output: Type.Object({ ok: Type.Boolean(), note: Type.Optional(Type.String()) }),
  successStatus: 200,
  errors: [{ status: 400, description: 'note is longer than 20 characters' }],
  deprecated: { since: '2026-08-01', sunset: '2027-02-01', link: 'https://example.org/changes' },
  async handler({ input }) {
    return { body: { ok: true, note: input.note } };
  },
});
