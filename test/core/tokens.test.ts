// The token estimator against OpenAI's o200k encoding (gpt-tokenizer, a dev dependency used only
// in tests): never below it on natural text of many scripts, close on English, code and other
// Latin-script text, linear in time on adversarial text, never above the cheap upper bound the
// router uses. The fuzz over adversarial text is test/core/tokens-bound.test.ts.
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { estimatePromptTokens, estimateTextTokens, promptTokensUpperBound } from '../../core/tokens.js';
import type { ChatMessage, ChatRequest } from '../../core/chat-types.js';

const natural: Record<string, string> = {
  english:
    'The quick brown fox jumps over the lazy dog. In 1905, Albert Einstein published four groundbreaking papers that changed physics forever, including special relativity and the photoelectric effect. Please summarize the following contract in three bullet points, focusing on termination clauses and liabilities.',
  code: 'function fib(n: number): number {\n  if (n < 2) return n;\n  return fib(n - 1) + fib(n - 2);\n}\nconst result = [1, 2, 3].map((x) => ({ id: x, name: `item-${x}`, tags: ["a", "b"] }));\nconsole.log(JSON.stringify(result, null, 2));',
  json: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"temperature":0.2,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}',
  chinese: '人工智能是计算机科学的一个分支，它企图了解智能的实质，并生产出一种新的能以人类智能相似的方式做出反应的智能机器。该领域的研究包括机器人、语言识别、图像识别、自然语言处理和专家系统等。',
  japanese: '人工知能とは、人間の知的能力をコンピュータ上で実現する様々な技術・ソフトウェア・コンピュータシステムのことです。東京は日本の首都であり、世界最大の都市圏の一つです。',
  korean: '인공지능은 인간의 학습능력, 추론능력, 지각능력을 인공적으로 구현하려는 컴퓨터 과학의 세부분야 중 하나이다. 서울은 대한민국의 수도이다.',
  russian: 'Искусственный интеллект — свойство интеллектуальных систем выполнять творческие функции, которые традиционно считаются прерогативой человека. Москва является столицей России.',
  german: 'Künstliche Intelligenz ist ein Teilgebiet der Informatik, das sich mit der Automatisierung intelligenten Verhaltens und dem maschinellen Lernen befasst. Die Größe der Städte wächst.',
  arabic: 'الذكاء الاصطناعي هو سلوك وخصائص معينة تتسم بها البرامج الحاسوبية تجعلها تحاكي القدرات الذهنية البشرية وأنماط عملها.',
  hindi: 'कृत्रिम बुद्धिमत्ता कंप्यूटर विज्ञान की एक शाखा है जो मशीनों को बुद्धिमान बनाने से संबंधित है।',
  emoji: 'Great job team! 🎉🚀🔥 Let us celebrate 🥳🍾 and then ship it ✅✅✅ tomorrow 😀😃😄.',
  markdown: '## Summary\n\n- **Revenue** grew 12% year over year to $4.2B.\n- Operating margin: 18.5% (vs. 17.1%).\n\n| Region | Q1 | Q2 |\n|---|---|---|\n| EMEA | 1.2 | 1.3 |\n',
  base64: Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7919) % 256)).toString('base64'),
};

// ASCII words cost what the vocabularies bill for them (core/letter-bpe.ts); other scripts, emoji
// and the letters of base64 by their UTF-8 bytes, the byte-level bound, so they are reserved above
// their cost. Words with letters beyond ASCII (German's umlauts) count their bytes: BPE can cost
// more on a whole word than on its parts, so the parts cannot be merged on their own.
const closest: Record<string, number> = { english: 1.3, code: 1.3, markdown: 1.3, german: 2 };

t.test('natural text of many scripts is never estimated below o200k; English and code within +30%', async (t) => {
  for (const [name, text] of Object.entries(natural)) {
    const ratio = estimateTextTokens(text) / countTokens(text);
    t.ok(ratio >= 1 && ratio <= (closest[name] ?? 10), `${name}: estimate / o200k = ${ratio.toFixed(2)}`);
  }
});

t.test('time is linear even on the text that makes BPE slow, and bounded per request', async (t) => {
  const rareCjk = Array.from({ length: 200_000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join('');
  const started = performance.now();
  const estimated = estimateTextTokens(rareCjk);
  const elapsed = performance.now() - started;
  t.equal(estimated, 600_000, 'three tokens per ideograph: its UTF-8 bytes');
  // Not a timing assertion on the machine: BPE on this text takes seconds, the estimate milliseconds.
  t.ok(elapsed < 2000, `200k rare ideographs estimated in ${elapsed.toFixed(1)} ms`);
  const huge = 'word '.repeat(2_000_000); // 10M characters: beyond the per-request scan budget
  const request: ChatRequest = { model: 'x', messages: [{ role: 'user', content: huge }] };
  const tokens = estimatePromptTokens(request);
  // The scanned part ends on a space, weighed as a piece of its own: one token more.
  t.equal(tokens, 3 + 3 + 200_000 + 1 + 9_000_000, `1M characters scanned, the other 9M counted at their UTF-8 bytes: ${tokens}`);
});

t.test('the prompt estimate adds the message overhead and flat image counts, and stays under the upper bound', async (t) => {
  const request: ChatRequest = {
    model: 'x',
    messages: [
      { role: 'system', content: natural.english! },
      {
        role: 'user',
        content: [
          { type: 'text', text: natural.chinese! },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/b.png' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"paris"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: natural.json! },
    ],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
  };
  const estimate = estimatePromptTokens(request);
  const text = estimateTextTokens(natural.english!) + estimateTextTokens(natural.chinese!) + estimateTextTokens(natural.json!);
  t.ok(estimate >= 3 + 4 * 3 + 85 + 765 + text, `overhead and images counted: ${estimate}`);
  t.ok(estimate <= promptTokensUpperBound(request, Buffer.byteLength(JSON.stringify(request))), 'never above the bound the router checks first');
});

t.test('past the scan budget, later texts count their UTF-8 bytes, whatever the text scanned before', async (t) => {
  // 30 messages of 100k characters: the first ten are scanned; the rest may be anything (the
  // whitespace attack after a megabyte of prose), so they are counted at the byte-level bound.
  const english = natural.english!.repeat(Math.ceil(100_000 / natural.english!.length)).slice(0, 100_000);
  const attack = '\n\t \t\n '.repeat(100_000 / 6 + 1).slice(0, 100_000);
  const messages = Array.from({ length: 30 }, (_, i) => ({ role: 'user' as const, content: i < 10 ? english : attack }));
  const estimate = estimatePromptTokens({ model: 'x', messages });
  t.equal(estimate, 3 + 30 * 3 + 10 * estimateTextTokens(english) + 20 * 100_000, `${estimate}`);
});

t.test('files and audio count by their payload size, never as text', async (t) => {
  const pdf = Buffer.alloc(200_000, 7).toString('base64');
  const audio = Buffer.alloc(320_000, 1).toString('base64'); // ~10 s of 16 kHz 16-bit wav
  const request: ChatRequest = {
    model: 'x',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${pdf}` } },
          { type: 'input_audio', input_audio: { data: audio, format: 'wav' } },
          { type: 'file', file: { file_id: 'file-abc' } },
        ],
      },
    ],
  };
  const estimate = estimatePromptTokens(request);
  const expected = 3 + 3 + 2000 + 320 + 1000; // priming, message, 200 KB of file, 320 KB of audio, a file by id
  t.ok(estimate >= expected && estimate <= expected + 10, `estimated ${estimate} (the file name adds a few)`);
  t.ok(estimate <= promptTokensUpperBound(request, Buffer.byteLength(JSON.stringify(request))), 'never above the upper bound');
});

t.test('everything a provider renders into the prompt is counted: names, tool call ids, calls, tools and their deprecated forms', async (t) => {
  const base: ChatRequest = { model: 'x', messages: [{ role: 'user', content: 'hi' }] };
  const baseline = estimatePromptTokens(base);
  const call = { name: 'lookup', arguments: '{"q":"paris"}' };
  const more: Array<[string, ChatRequest]> = [
    ['a name', { ...base, messages: [{ role: 'user', content: 'hi', name: 'alice' }] }],
    ['a tool call id', { ...base, messages: [{ role: 'tool', content: 'hi', tool_call_id: 'call_0123456789' }] }],
    ['a tool call', { ...base, messages: [{ role: 'user', content: 'hi', tool_calls: [{ id: 'c', type: 'function', function: call }] }] }],
    ['a legacy function call', { ...base, messages: [{ role: 'assistant', content: null, function_call: call } as ChatMessage] }],
    ['tools', { ...base, tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] }],
    ['legacy functions', { ...base, functions: [{ name: 'lookup', parameters: { type: 'object' } }] }],
    ['a response schema', { ...base, response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } } }],
  ];
  for (const [what, request] of more) {
    const estimate = estimatePromptTokens(request);
    t.ok(estimate > baseline, `${what}: ${estimate} > ${baseline}`);
    t.ok(estimate <= promptTokensUpperBound(request, Buffer.byteLength(JSON.stringify(request))), `${what}: under the router's bound`);
  }
});

/** mulberry32: letters that do not repeat. */
function randomLetters(seed: number): (n: number) => string {
  return (n) => {
    let out = '';
    for (let i = 0; i < n; i++) {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      out += String.fromCharCode(97 + (((x ^ (x >>> 14)) >>> 0) % 26));
    }
    return out;
  };
}

t.test('the letters merged per request are bounded however the text is split into messages', async (t) => {
  // 1M characters of never-repeated 24-letter words: merged, ~13 tokens each; past the request's
  // budget of 100,000 letters, their 24-25 bytes. Split into 100 messages, the budget is still one.
  const letters = randomLetters(7);
  const words = Array.from({ length: 40_000 }, () => ` ${letters(24)}`);
  const messages: ChatMessage[] = Array.from({ length: 100 }, (_, i) => ({ role: 'user', content: words.slice(i * 400, (i + 1) * 400).join('') }));
  const tokens = estimatePromptTokens({ model: 'x', messages });
  const merged = 4_000 * 13; // the most the budget lets through, at ~13 tokens a word
  t.ok(tokens >= 36_000 * 24 + merged * 0.8, `${tokens} tokens: at most ~4,000 of the 40,000 words merged, the rest at their bytes`);
});

t.test('remembered words keep no request text alive', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const letters = randomLetters(11);
  gc();
  const before = process.memoryUsage().heapUsed;
  // Each text: a fresh word the estimate merges and remembers, then 20 MB of other text. A key that
  // is a slice of the text would keep each 20 MB alive: ~200 MB after 10 of them. Only the first
  // 1M characters of each are scanned (the rest count their bytes), so few large texts prove the
  // same as many small ones, in a tenth of the time.
  for (let i = 0; i < 10; i++) estimateTextTokens(`${letters(20)} ${'1 '.repeat(10_000_000)}`);
  gc();
  const grown = (process.memoryUsage().heapUsed - before) / 1e6;
  t.ok(grown < 50, `heap grew ${grown.toFixed(1)} MB after 10 texts of 20 MB`);
});

t.test('the scan budget does not cut a word in two, and text parts are weighed joined and apart', async (t) => {
  // " Completion" + "s" costs 2, " Completions" 3: cut at the budget, the word's end was counted apart.
  const cut = `${' the'.repeat(249_997)}. Completions`;
  t.ok(estimateTextTokens(cut) >= countTokens(cut), `a word across the 1M-character budget: ${estimateTextTokens(cut)} ≥ ${countTokens(cut)}`);
  // "completion" and "s" as two text parts: billed as one word if a provider joins them.
  const parts = ['rate', 'limit', 'pass', 'through', 'completion', 's', 'UNPRI', 'CED'];
  const request = (content: ChatRequest['messages'][number]['content']): ChatRequest => ({ model: 'x', messages: [{ role: 'user', content }] });
  const asParts = estimatePromptTokens(request(parts.map((text) => ({ type: 'text', text }))));
  t.ok(asParts >= 6 + countTokens(parts.join('')), `joined: ${asParts} ≥ 6 + ${countTokens(parts.join(''))}`);
  t.ok(asParts >= 6 + countTokens(parts.join('\n')), `apart, a newline between: ${asParts} ≥ 6 + ${countTokens(parts.join('\n'))}`);
});

