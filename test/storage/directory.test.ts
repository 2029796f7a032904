// The directory repository's contract: the same calls give the same members on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { directory } from '../../src/storage/directory.ts';
import { members } from '../../src/storage/members.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`directory repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const columns = (bio: string, visibility = 'members') => ({
      bio,
      skills: 'soldering',
      projects: 'door sensor',
      visibility,
      show_email: 0,
      updated_at: 10,
    });

    async function save(memberId: string, bio: string, visibility = 'members'): Promise<void> {
      const values = columns(bio, visibility);
      await storage.db.transaction().execute(async (trx) => {
        const member = await members.nameAndHandle(trx, memberId);
        await directory.saveProfile(trx, memberId, values);
        await directory.indexEntry(trx, memberId, { ...member, ...values }, visibility !== 'hidden');
      });
    }

    test('a saved profile is read back and replaced by the next save', async () => {
      const member = await storage.member('Ada');
      assert.equal(await directory.profileOf(storage.db, member), undefined);
      await save(member, 'first');
      await save(member, 'second');
      const profile = await directory.profileOf(storage.db, member);
      // PostgreSQL's row also carries the index's search_text.
      const { search_text: _, ...stored } = { search_text: undefined, ...profile };
      assert.deepEqual(
        { ...stored, show_email: Number(profile?.show_email), updated_at: Number(profile?.updated_at) },
        { member_id: member, ...columns('second') },
      );
      assert.deepEqual(await members.nameAndHandle(storage.db, member), {
        name: 'Ada',
        handle: member.replace(/^mem_ada_/, 'ada-'),
      });
    });

    let bea = '';

    test('listed members come by name; a hidden one never does', async () => {
      const zed = await storage.member('Zed');
      bea = await storage.member('Bea');
      const hid = await storage.member('Hid');
      await save(zed, 'keeps bees');
      await save(bea, 'keeps bees too');
      await save(hid, 'keeps bees secretly', 'hidden');
      const listed = (await directory.listedByName(storage.db, 10)).map((row) => row.id);
      assert.deepEqual(
        listed.filter((id) => [zed, bea, hid].includes(id)),
        [bea, zed],
      );
      assert.equal((await directory.listedByName(storage.db, 1)).length, 1);
    });

    test('the list by name pages after a name and id: pages chain, no member lost or repeated', async () => {
      const named = [];
      for (const name of ['Pam', 'Pam', 'Quin', 'Pam', 'Rob']) {
        const id = await storage.member(name);
        await save(id, 'paged');
        named.push(id);
      }
      const everyone = (await directory.listedByName(storage.db, 100)).map((row) => row.id);
      const walked: string[] = [];
      let after: { name: string; id: string } | undefined;
      for (let round = 0; round < 50; round++) {
        const page = await directory.listedByName(storage.db, 2, after);
        assert.ok(page.length <= 2);
        walked.push(...page.map((row) => row.id));
        if (page.length < 2) break;
        after = page.at(-1);
      }
      assert.deepEqual(walked, everyone);
      for (const id of named) assert.ok(walked.includes(id));
    });

    test('a search ranks its first candidates only, and pages by rank without loss or repeat', async () => {
      const all = await directory.matching(storage.db, ['paged'], 50);
      assert.equal(all.length, 5);
      const paged = [
        ...(await directory.matching(storage.db, ['paged'], 2, 0)),
        ...(await directory.matching(storage.db, ['paged'], 2, 2)),
        ...(await directory.matching(storage.db, ['paged'], 2, 4)),
      ];
      assert.deepEqual(paged, all);
      assert.equal((await directory.matching(storage.db, ['paged'], 50, 0, 3)).length, 3);
    });

    test('a word more rows hold than are ranked: its candidates come best first and page without repeat', async () => {
      const many = await storage.member('Mo');
      const one = await storage.member('Oz');
      await save(many, 'tinker tinker tinker');
      await save(one, 'tinker of clocks, lamps, radios and anything with a spring in it');
      await save(await storage.member('Pip'), 'tinkering with radios');
      const ranked = await directory.matching(storage.db, ['tinker'], 10, 0, 2);
      assert.equal(ranked.length, 2);
      // The embedded engine takes whole-word holders first; PostgreSQL the first two its index finds.
      if (engine.name === 'sqlite') assert.deepEqual(ranked, [many, one]);
      assert.deepEqual(
        [
          ...(await directory.matching(storage.db, ['tinker'], 1, 0, 2)),
          ...(await directory.matching(storage.db, ['tinker'], 1, 1, 2)),
        ],
        ranked,
      );
      // Fewer whole-word holders than candidates: the prefix matches are ranked, the third among them.
      assert.equal((await directory.matching(storage.db, ['tinker'], 10, 0, 3)).length, 3);
    });

    test('where prefix holders fill the candidates, a whole-word holder found later is still ranked', async () => {
      for (const [name, bio] of [
        ['Ga', 'gardening'],
        ['Gb', 'gardener'],
        ['Gc', 'gardens'],
      ])
        await save(await storage.member(name), bio);
      const whole = await storage.member('Gd');
      await save(whole, 'garden');
      const ranked = await directory.matching(storage.db, ['garden'], 10, 0, 3);
      assert.equal(ranked.length, 3);
      if (engine.name === 'sqlite') assert.ok(ranked.includes(whole));
    });

    test('matching finds every word as a prefix, among listed members only', async () => {
      const found = await directory.matching(storage.db, ['bee', 'keep'], 10);
      assert.equal(found.length, 2);
      assert.ok(found.includes(bea));
      assert.deepEqual(await directory.matching(storage.db, ['nothinglikethis'], 10), []);
      assert.equal((await directory.matching(storage.db, ['bee'], 1)).length, 1);
    });

    test('a profile hidden after being listed leaves the index', async () => {
      const member = await storage.member('Gone');
      await save(member, 'unusualword');
      assert.deepEqual(await directory.matching(storage.db, ['unusualword'], 10), [member]);
      await save(member, 'unusualword', 'hidden');
      assert.deepEqual(await directory.matching(storage.db, ['unusualword'], 10), []);
    });

    test('entries carry the columns the directory shows', async () => {
      const member = await storage.member('Cy');
      await save(member, 'entry');
      const [row] = await directory.entries(storage.db, [member]);
      assert.equal(row.id, member);
      assert.equal(row.name, 'Cy');
      assert.equal(row.bio, 'entry');
      assert.equal(row.visibility, 'members');
      assert.equal(Number(row.show_email), 0);
      assert.equal(row.tier, 'member');
      assert.match(row.email, /@example\.org$/);
    });
  });
}
