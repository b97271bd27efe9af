// Whether a simulated model calls a tool, and which, as the tool_choice contract says: "none" never;
// a named function always that one; "required" always one (the tool the prompt is most about, else
// the first); "auto" or unset only when the user's last message is about one of the tools — never
// right after a tool result, when a model answers from the result instead. "About" is shared words
// between the prompt and the tool's name and description ("Weather in Oslo?" and get_weather).
import type { ChatMessage, ChatRequest, FunctionTool } from '../core/chat-types.js';

/** Words that say nothing about what a tool is for. */
const FILLER = new Set([
  'get', 'set', 'the', 'and', 'for', 'from', 'with', 'into', 'that', 'this', 'what', 'which', 'when', 'where', 'how', 'are', 'was', 'can',
  'you', 'your', 'please', 'tell', 'give', 'show', 'find', 'fetch', 'list', 'make', 'create', 'return', 'returns', 'current', 'given',
  'specified', 'function', 'tool', 'call', 'use', 'about', 'some', 'any', 'one', 'all', 'like', 'there',
]);
/** Words match on their first letters, so "forecasts" finds get_forecast and "booking" book_hotel. */
const STEM = 4;

export function toolToCall(request: ChatRequest): FunctionTool | undefined {
  const tools = request.tools ?? [];
  const choice = request.tool_choice;
  if (tools.length === 0 || choice === 'none') return undefined;
  if (typeof choice === 'object') return tools.find((tool) => tool.function.name === choice.function.name);
  const prompt = lastUserText(request.messages);
  const best = mostRelevant(tools, prompt);
  if (choice === 'required') return best ?? tools[0];
  if (request.messages.at(-1)?.role !== 'user') return undefined;
  return best;
}

/** The text of the user's last message ('' when there is none). */
export function lastUserText(messages: readonly ChatMessage[]): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return last ? textOf(last.content) : '';
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? '').join(' ');
  return '';
}

function mostRelevant(tools: readonly FunctionTool[], prompt: string): FunctionTool | undefined {
  const asked = new Set(words(prompt).map(stem));
  let best: FunctionTool | undefined;
  let bestScore = 0;
  for (const tool of tools) {
    // The name says what the tool is for more surely than its description.
    const score = 2 * overlap(words(tool.function.name), asked) + overlap(words(tool.function.description ?? ''), asked);
    if (score > bestScore) [best, bestScore] = [tool, score];
  }
  return best;
}

function overlap(candidates: string[], asked: Set<string>): number {
  return new Set(candidates.map(stem).filter((word) => asked.has(word))).size;
}

/** Lower-case words of three letters or more, split at snake_case, kebab-case and camelCase. */
function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length >= 3 && !FILLER.has(word));
}

function stem(word: string): string {
  return word.slice(0, STEM);
}
