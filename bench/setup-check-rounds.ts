// (b) in interleaved rounds on a warm server: node:http's hello world (a), node:http
// sending setup-check's answer with no work (b''), then the service's bearer setup-check (b), three
// times over. The single (b) row of the main table runs first after the server starts; these
// rounds run later in the same run, each against the (a) measured just before it. When wrk is
// installed each round also loads (a), (b'') and (b) with it: autocannon spends about as much CPU
// on a request as the server does here, and wrk leaves the server to set the pace, as for (f wrk).
import { type Figures, load, median, report } from './support.ts';
import { WRK_INSTALLED, wrkLoad } from './wrk.ts';

export interface SetupCheckRound {
  hello: Figures;
  floor: Figures;
  check: Figures;
  withWrk?: { hello: Figures; floor: Figures; check: Figures };
}

interface Target {
  url: string;
  pid: number;
}

export async function setupCheckRounds(
  hello: Target,
  server: Target,
  token: string,
): Promise<SetupCheckRound[]> {
  const rounds: SetupCheckRound[] = [];
  for (let round = 1; round <= 3; round++) {
    rounds.push({
      hello: await load(`${round}: (a) node:http hello world`, { url: `${hello.url}/` }, hello.pid),
      floor: await load(
        `${round}: (b'') node:http, same reply as (b), no work`,
        { url: `${hello.url}/setup-check` },
        hello.pid,
      ),
      check: await load(
        `${round}: (b) GET /api/agent/setup-check, bearer`,
        { url: `${server.url}/api/agent/setup-check`, headers: { authorization: `Bearer ${token}` } },
        server.pid,
      ),
      withWrk: WRK_INSTALLED
        ? {
            hello: wrkLoad(`${round}: (a wrk) node:http hello world, wrk`, `${hello.url}/`, hello.pid),
            floor: wrkLoad(
              `${round}: (b'' wrk) node:http, same reply as (b), wrk`,
              `${hello.url}/setup-check`,
              hello.pid,
            ),
            check: wrkLoad(
              `${round}: (b wrk) GET /api/agent/setup-check, bearer, wrk`,
              `${server.url}/api/agent/setup-check`,
              server.pid,
              { authorization: `Bearer ${token}` },
            ),
          }
        : undefined,
    });
  }
  return rounds;
}

const share = (row: Figures, of: Figures) => Math.round((100 * row.requestsPerSecond) / of.requestsPerSecond);

export function reportSetupCheckRounds(rounds: SetupCheckRound[]): void {
  console.log('(b), round by round on the warm server (each against the (a) just before it):');
  // Each round's wrk rows follow its autocannon rows; its (a wrk) is the baseline of the two after it.
  report(
    rounds.flatMap(({ hello, floor, check, withWrk }) => [
      hello,
      floor,
      check,
      ...(withWrk ? [withWrk.hello, withWrk.floor, withWrk.check] : []),
    ]),
    rounds.flatMap(({ hello, withWrk }) => (withWrk ? [hello, withWrk.hello] : [hello])),
  );
  const withWrk = rounds.flatMap(({ withWrk }) => (withWrk ? [withWrk] : []));
  const ratios = rounds.map(({ hello, check }) => share(check, hello));
  const floors = rounds.map(({ hello, floor }) => share(floor, hello));
  const p99s = rounds.map(({ check }) => check.p99);
  const floorP99s = rounds.map(({ floor }) => floor.p99);
  // The floor does no work: a p99 it shares with (b) in the same round is not the service's. The load
  // generator's own time is in every latency it reads, so its share of its core is printed beside
  // (from its CPU a request, a whole µs: about ±2 points) (docs/benchmarks.md).
  const generatorBusy = rounds.map(({ check }) =>
    check.clientCpuPerRequest === undefined
      ? '?'
      : `${Math.round((check.clientCpuPerRequest * check.requestsPerSecond) / 1e4)}%`,
  );
  console.log(
    `(b) >= 75% of (a), median of 3 rounds → ${median(ratios)}% (rounds: ${ratios.join(', ')}); ` +
      `p99 < 5 ms → ${median(p99s)} ms (rounds: ${p99s.join(', ')}); its floor (b'') ${median(floors)}% ` +
      `(rounds: ${floors.join(', ')}), p99 ${floorP99s.join(', ')} ms; the load generator busy ` +
      `${generatorBusy.join(', ')} of its core during (b)`,
  );
  if (withWrk.length === 0) return;
  // Server-bound: (b) against its own floor, node:http sending the same answer, in the same round.
  const ofFloor = withWrk.map(({ floor, check }) => share(check, floor));
  const ofHello = withWrk.map(({ hello, check }) => share(check, hello));
  const floorOfHello = withWrk.map(({ hello, floor }) => share(floor, hello));
  const p99Pairs = withWrk.map(({ floor, check }) => `${check.p99} / ${floor.p99}`);
  console.log(
    `with wrk (the server sets the pace): (b) ${median(ofFloor)}% of (b'') (rounds: ${ofFloor.join(', ')}), ` +
      `${median(ofHello)}% of (a) (rounds: ${ofHello.join(', ')}); (b'') ${median(floorOfHello)}% of (a) ` +
      `(rounds: ${floorOfHello.join(', ')}); p99 ms (b) / (b'') by round: ${p99Pairs.join('; ')}`,
  );
}
