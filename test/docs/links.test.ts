import t from 'tap';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '../../core/paths.js';
import { anchorsOf } from '../../scripts/markdown-anchor.js';

/** README.md and every Markdown file under docs/. */
function documents(): string[] {
  const found = [join(projectRoot, 'README.md')];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) found.push(path);
    }
  };
  walk(join(projectRoot, 'docs'));
  return found;
}

/** The targets of inline Markdown links `[text](target)`, outside code fences and code spans. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const text = line.replace(/`[^`]*`/g, '');
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) targets.push(match[1]!);
  }
  return targets;
}

const anchors = new Map<string, Set<string>>();
const anchorsIn = (file: string) => {
  let found = anchors.get(file);
  if (!found) anchors.set(file, (found = anchorsOf(readFileSync(file, 'utf8'))));
  return found;
};

for (const file of documents()) {
  const name = relative(projectRoot, file);
  t.test(`every relative link in ${name} points to a file that exists, and to an anchor it has`, async (t) => {
    for (const target of linkTargets(readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const linked = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(linked)) {
        t.fail(`${target}: ${relative(projectRoot, linked)} does not exist`);
        continue;
      }
      if (anchor !== undefined) {
        if (!linked.endsWith('.md')) t.fail(`${target}: an anchor into a file that is not Markdown`);
        else t.ok(anchorsIn(linked).has(anchor), `${target}: ${relative(projectRoot, linked)} has #${anchor}`);
      } else t.pass(target);
    }
  });
}
