// A string that matches a JSON Schema `pattern`, for the simulated structured answers: schemas put
// patterns on codes, ids and phone numbers, and a strict client rejects an answer that misses one.
// Reads the common subset of regular expressions — literals, escapes (\d \w \s …), classes with
// ranges and negation, groups with alternation, the quantifiers ? * + {n} {n,} {n,m} and anchors —
// and answers undefined for the rest (look-arounds, back-references) or when the sample does not
// match after all; the caller then falls back to a plain value.

type Node =
  | { kind: 'chars'; pick: (k: number) => string } // one character
  | { kind: 'group'; branches: Node[][] }
  | { kind: 'repeat'; node: Node; min: number; max: number }
  | { kind: 'empty' };

/** Characters tried for a class, in order: a readable sample before an odd one. */
const PREFERRED = 'example0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdfghijknoqrstuvwyz _-.@:/+';
/** How often an open repetition (*, +, {2,}) repeats: a few, so a sample reads like a value, not like "a". */
const OPEN_REPEAT = 3;

export function samplePattern(pattern: string): string | undefined {
  let matcher: RegExp;
  try {
    matcher = new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
  try {
    const parser = new Parser(pattern);
    const branches = parser.alternation();
    if (!parser.done()) return undefined;
    let counter = 0;
    const sample = generate({ kind: 'group', branches }, () => counter++);
    return matcher.test(sample) ? sample : undefined;
  } catch {
    return undefined;
  }
}

/** The most times one repeated part of a pattern is written. */
const MAX_REPEAT = 256;

function generate(node: Node, next: () => number): string {
  switch (node.kind) {
    case 'chars':
      return node.pick(next());
    case 'empty':
      return '';
    case 'group':
      // The first branch is as good as any; it is usually the common case.
      return node.branches[0]!.map((child) => generate(child, next)).join('');
    case 'repeat': {
      // `a{100000000}`: a client's pattern must not make the demo build a huge string.
      const count = Math.min(node.max, Math.max(node.min, OPEN_REPEAT), MAX_REPEAT);
      let out = '';
      for (let i = 0; i < count; i++) out += generate(node.node, next);
      return out;
    }
  }
}

class Parser {
  private at = 0;
  constructor(private readonly source: string) {}

  done(): boolean {
    return this.at >= this.source.length;
  }

  alternation(): Node[][] {
    const branches: Node[][] = [this.sequence()];
    while (this.peek() === '|') {
      this.at++;
      branches.push(this.sequence());
    }
    return branches;
  }

  private sequence(): Node[] {
    const nodes: Node[] = [];
    while (!this.done() && this.peek() !== '|' && this.peek() !== ')') {
      const atom = this.atom();
      nodes.push(this.quantified(atom));
    }
    return nodes;
  }

  private atom(): Node {
    const char = this.source[this.at++]!;
    if (char === '^' || char === '$') return { kind: 'empty' };
    if (char === '.') return fixed('x');
    if (char === '(') {
      if (this.source.startsWith('?:', this.at)) this.at += 2;
      else if (this.peek() === '?') throw new Error('look-arounds and named groups are not sampled');
      const branches = this.alternation();
      if (this.source[this.at++] !== ')') throw new Error('unclosed group');
      return { kind: 'group', branches };
    }
    if (char === '[') return this.characterClass();
    if (char === '\\') return this.escape();
    if ('*+?{'.includes(char)) throw new Error('nothing to repeat');
    return fixed(char);
  }

  private quantified(node: Node): Node {
    const char = this.peek();
    let min: number;
    let max: number;
    if (char === '?') [min, max] = [0, 1];
    else if (char === '*') [min, max] = [0, Infinity];
    else if (char === '+') [min, max] = [1, Infinity];
    else if (char === '{') {
      const bounds = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at));
      if (!bounds) return node; // a literal brace
      min = Number(bounds[1]);
      max = bounds[2] === undefined ? min : bounds[3] === '' ? Infinity : Number(bounds[3]);
      this.at += bounds[0].length - 1;
    } else return node;
    this.at++;
    if (this.peek() === '?') this.at++; // lazy: same strings
    return { kind: 'repeat', node, min, max };
  }

  private escape(): Node {
    const char = this.source[this.at++];
    if (char === undefined) throw new Error('dangling escape');
    const set = CLASS_ESCAPES[char];
    if (set) return fromSet(set);
    if (char === 'b' || char === 'B') return { kind: 'empty' };
    if (/[1-9k]/.test(char)) throw new Error('back-references are not sampled');
    return fixed(this.literalEscape(char));
  }

  private literalEscape(char: string): string {
    if (char === 'n') return '\n';
    if (char === 't') return '\t';
    if (char === 'r') return '\r';
    if (char === 'u' || char === 'x') {
      const hex = /^\{?([0-9a-fA-F]+)\}?/.exec(this.source.slice(this.at));
      if (!hex) return char;
      this.at += hex[0].length;
      return String.fromCodePoint(parseInt(hex[1]!, 16));
    }
    return char;
  }

  private characterClass(): Node {
    const negated = this.peek() === '^';
    if (negated) this.at++;
    const members = new Set<string>();
    let first = true;
    while (this.peek() !== ']' || first) {
      first = false;
      if (this.done()) throw new Error('unclosed class');
      let char = this.source[this.at++]!;
      if (char === '\\') {
        const escaped = this.source[this.at++]!;
        const set = CLASS_ESCAPES[escaped];
        if (set) {
          for (const member of set) members.add(member);
          continue;
        }
        char = this.literalEscape(escaped);
      }
      if (this.peek() === '-' && this.source[this.at + 1] !== ']' && this.at + 1 < this.source.length) {
        this.at++;
        let end = this.source[this.at++]!;
        if (end === '\\') end = this.literalEscape(this.source[this.at++]!);
        for (let code = char.codePointAt(0)!; code <= end.codePointAt(0)! && members.size < 4096; code++) members.add(String.fromCodePoint(code));
      } else members.add(char);
    }
    this.at++; // ]
    if (!negated) return fromSet([...members]);
    const outside = [...PREFERRED].filter((char) => !members.has(char));
    if (outside.length === 0) throw new Error('no sample character outside the class');
    return fromSet(outside);
  }

  private peek(): string | undefined {
    return this.source[this.at];
  }
}

const DIGITS = [...'0123456789'];
const WORD = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'];
const CLASS_ESCAPES: Record<string, string[]> = {
  d: DIGITS,
  D: [...'x-'],
  w: WORD,
  W: [...'-. '],
  s: [' '],
  S: [...'x'],
};

function fixed(char: string): Node {
  return { kind: 'chars', pick: () => char };
}

/** Members in PREFERRED order first, so [a-z]+ reads "exa…" rather than "aaa". */
function fromSet(members: string[]): Node {
  const set = new Set(members);
  const ordered = [...new Set([...PREFERRED].filter((char) => set.has(char)).concat(members))];
  return { kind: 'chars', pick: (k) => ordered[k % ordered.length]! };
}
