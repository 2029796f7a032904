import { resolve } from 'node:path';
import type { Command } from 'commander';
import { readContentFolder } from '../domain/content/folder.ts';
import { importContent } from '../domain/content/import.ts';
import { ContentError } from '../domain/content/markdown-file.ts';
import { fail, printJson, withDeps } from './command-helpers.ts';

/** The operator's published content: newsletter issues, presentations, news links, the donation page. */
export function registerContentCommands(program: Command): void {
  program
    .command('content')
    .description('the content agents read through the public tools and the newsletter feeds')
    .command('import <dir>')
    .description(
      'mirror a content folder into the database (docs/content.md): new and changed files are stored, files gone from a kind’s folder are removed, a kind whose folder is absent is left alone; nothing is stored when any file is invalid',
    )
    .action((dir) =>
      withDeps(async (deps) => {
        try {
          printJson(await importContent(deps, readContentFolder(resolve(dir))));
        } catch (error) {
          if (error instanceof ContentError) fail(`content not imported:\n${error.message}`);
          throw error;
        }
      }),
    );
}
