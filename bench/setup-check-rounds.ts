// The bearer read in interleaved rounds on a warm server: node:http hello, node:http sending
// setup-check's answer with no work (the setup-check floor), then the service's bearer setup-check,
// three times over. The single bearer-read row of the main table runs first after the server starts;
// these rounds run later in the same run, each against the node:http hello measured just before it.
// When wrk is installed each round also loads the three with it: autocannon spends about as much CPU
// on a request as the server does here, and wrk leaves the server to set the pace, as for the events
// list under wrk.
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
      hello: await load(`${round}: node:http hello`, { url: `${hello.url}/` }, hello.pid),
      floor: await load(
        `${round}: node:http floor, setup-check reply`,
        { url: `${hello.url}/setup-check` },
        hello.pid,
      ),
      check: await load(
        `${round}: bearer read`,
        { url: `${server.url}/api/agent/setup-check`, headers: { authorization: `Bearer ${token}` } },
        server.pid,
      ),
      withWrk: WRK_INSTALLED
        ? {
            hello: wrkLoad(`${round}: node:http hello, wrk`, `${hello.url}/`, hello.pid),
            floor: wrkLoad(
              `${round}: node:http floor, setup-check reply, wrk`,
              `${hello.url}/setup-check`,
              hello.pid,
            ),
            check: wrkLoad(`${round}: bearer read, wrk`, `${server.url}/api/agent/setup-check`, server.pid, {
              authorization: `Bearer ${token}`,
            }),
          }
        : undefined,
    });
  }
  return rounds;
}

const share = (row: Figures, of: Figures) => Math.round((100 * row.requestsPerSecond) / of.requestsPerSecond);

export function reportSetupCheckRounds(rounds: SetupCheckRound[]): void {
  console.log(
    'bearer read, round by round on the warm server (each against the node:http hello just before it):',
  );
  // Each round's wrk rows follow its autocannon rows; its node:http hello under wrk is the baseline of the two after it.
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
  // The floor does no work: a p99 it shares with the bearer read in the same round is not the
  // service's. The load generator's own time is in every latency it reads, so its share of its core is printed beside
  // (from its CPU a request, a whole µs: about ±2 points) (docs/benchmarks.md).
  const generatorBusy = rounds.map(({ check }) =>
    check.clientCpuPerRequest === undefined
      ? '?'
      : `${Math.round((check.clientCpuPerRequest * check.requestsPerSecond) / 1e4)}%`,
  );
  console.log(
    `bearer read >= 75% of node:http hello, median of 3 rounds → ${median(ratios)}% (rounds: ${ratios.join(', ')}); ` +
      `p99 < 5 ms → ${median(p99s)} ms (rounds: ${p99s.join(', ')}); its node:http floor ${median(floors)}% ` +
      `(rounds: ${floors.join(', ')}), p99 ${floorP99s.join(', ')} ms; the load generator busy ` +
      `${generatorBusy.join(', ')} of its core during the bearer read`,
  );
  if (withWrk.length === 0) return;
  // Server-bound: the bearer read against its floor, node:http sending the same answer, in the same
  // round.
  const ofFloor = withWrk.map(({ floor, check }) => share(check, floor));
  const ofHello = withWrk.map(({ hello, check }) => share(check, hello));
  const floorOfHello = withWrk.map(({ hello, floor }) => share(floor, hello));
  const p99Pairs = withWrk.map(({ floor, check }) => `${check.p99} / ${floor.p99}`);
  console.log(
    `with wrk (the server sets the pace): bearer read ${median(ofFloor)}% of its node:http floor (rounds: ${ofFloor.join(', ')}), ` +
      `${median(ofHello)}% of node:http hello (rounds: ${ofHello.join(', ')}); the floor ${median(floorOfHello)}% of node:http hello ` +
      `(rounds: ${floorOfHello.join(', ')}); p99 ms bearer read / floor by round: ${p99Pairs.join('; ')}`,
  );
}
