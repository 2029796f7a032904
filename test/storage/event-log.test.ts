// The event-log repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readEvents } from '../../src/domain/eventlog/eventlog.ts';
import { eventLog } from '../../src/storage/event-log.ts';
import { transact } from '../../src/storage/transactions.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`event-log repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const record = (recipient: string, id: number, type: string) => ({
      recipient_id: recipient,
      id,
      type,
      at: 1000 + id,
      actor: '{"kind":"service"}',
      target: '{}',
      payload: '{}',
      actions: '[]',
    });
    const append = (recipient: string, type: string) =>
      transact(storage.port, async (trx) => {
        const id = await eventLog.nextId(trx, recipient);
        await eventLog.insert(trx, record(recipient, id, type));
        return id;
      });

    test('ids count up per reader from 1, in one transaction with the record (deferred on PostgreSQL)', async () => {
      assert.deepEqual(
        [await append('ada', 'a'), await append('ada', 'b'), await append('bo', 'a')],
        [1, 2, 1],
      );
      const rows = await eventLog.after(storage.db, 'ada', 0, 10);
      assert.deepEqual(
        rows.map((row) => [Number(row.id), row.type, Number(row.at), row.actor]),
        [
          [1, 'a', 1001, '{"kind":"service"}'],
          [2, 'b', 1002, '{"kind":"service"}'],
        ],
      );
    });

    test('a rolled-back append takes no id and leaves no record', async () => {
      await assert.rejects(
        transact(storage.port, async (trx) => {
          const id = await eventLog.nextId(trx, 'cy');
          await eventLog.insert(trx, record('cy', id, 'x'));
          throw new Error('undone');
        }),
        /undone/,
      );
      assert.equal(await append('cy', 'y'), 1);
      assert.deepEqual(
        (await eventLog.after(storage.db, 'cy', 0, 10)).map((row) => row.type),
        ['y'],
      );
    });

    test('after an id, up to a limit, of some types; an empty list of types matches nothing', async () => {
      for (const type of ['t1', 't2', 't1', 't3']) await append('di', type);
      assert.deepEqual(
        (await eventLog.after(storage.db, 'di', 1, 2)).map((row) => Number(row.id)),
        [2, 3],
      );
      assert.deepEqual(
        (await eventLog.after(storage.db, 'di', 0, 10, ['t1'])).map((row) => Number(row.id)),
        [1, 3],
      );
      assert.deepEqual(await eventLog.after(storage.db, 'di', 0, 10, []), []);
    });

    test('the latest id per reader, and a read bounded by it', async () => {
      assert.equal(await eventLog.lastId(storage.db, 'ln'), 0);
      for (const type of ['t1', 't2', 't1']) await append('ln', type);
      assert.equal(await eventLog.lastId(storage.db, 'ln'), 3);
      assert.deepEqual(
        (await eventLog.after(storage.db, 'ln', 0, 10, undefined, 2)).map((row) => Number(row.id)),
        [1, 2],
      );
    });

    test('a filtered read moves its cursor past the records of other types it covered', async () => {
      for (const type of ['common', 'common', 'rare', 'common', 'common']) await append('fc', type);
      const first = await readEvents(storage.db, 'fc', { since: 0, types: ['rare'], limit: 10 });
      assert.deepEqual(
        first.events.map((event) => event.id),
        [3],
      );
      assert.equal(first.cursor, 5);
      assert.equal(first.has_more, false);
      // Nothing of the type since: the cursor still advances to the latest record.
      await append('fc', 'common');
      const second = await readEvents(storage.db, 'fc', { since: first.cursor, types: ['rare'], limit: 10 });
      assert.deepEqual(second.events, []);
      assert.equal(second.cursor, 6);
      // A full page: the cursor is the last record returned, so the rest comes next.
      const paged = await readEvents(storage.db, 'fc', { since: 0, types: ['common'], limit: 2 });
      assert.deepEqual(
        paged.events.map((event) => event.id),
        [1, 2],
      );
      assert.equal(paged.cursor, 2);
      assert.equal(paged.has_more, true);
      // Unfiltered reads are as before: the cursor is the last record returned.
      const all = await readEvents(storage.db, 'fc', { since: 4, limit: 10 });
      assert.equal(all.cursor, 6);
      assert.deepEqual(await readEvents(storage.db, 'nobody', { since: 0, types: ['rare'], limit: 10 }), {
        events: [],
        cursor: 0,
        has_more: false,
      });
    });
  });
}
