import type { FastifyInstance } from 'fastify';

export interface AppRoute {
  path: string;
  methods: string[];
}

/**
 * Every route the app has, read from the app itself (Fastify's printRoutes tree), so a page added
 * later is covered without anyone adding it to a list. Lines look like `│   ├── /mint (POST)`:
 * four characters of indentation per level, a segment appended to its parent's path.
 */
export function appRoutes(app: FastifyInstance): AppRoute[] {
  const routes: AppRoute[] = [];
  const parents: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^(.*?)(?:└── |├── )(\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    const segment = match[2];
    const path = depth === 0 ? segment : `${parents[depth - 1]}${segment}`;
    parents[depth] = path;
    parents.length = depth + 1;
    if (match[3]) routes.push({ path, methods: match[3].split(', ') });
  }
  return routes;
}
