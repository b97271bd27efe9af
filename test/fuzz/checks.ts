// What must hold after every fuzz case, whatever was sent: each returns the broken promises in words
// (empty when all held), so the test can print them with the case that broke them.
import { checkCompletion, checkError } from '../helpers/schema.js';
import type { FuzzCase } from './cases.js';
import type { Exchange, RawResponse } from './wire.js';

/** Statuses a provider failure made on purpose may end in: the gateway says the provider failed. */
const PROVIDER_FAILURE = new Set([502, 503, 504]);

/** A 4xx body is OpenAI's error object, nothing more: {"error":{"message","type","param","code"}}. */
export function errorShapeProblem(response: RawResponse): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return `a ${response.status} whose body is not JSON: ${JSON.stringify(response.body.toString('utf8').slice(0, 200))}`;
  }
  const schemaProblem = checkError(body);
  if (schemaProblem) return `a ${response.status} that is not an OpenAI error: ${schemaProblem}`;
  const error = (body as { error: Record<string, unknown> }).error;
  const keys = Object.keys(error).sort().join(',');
  if (keys !== 'code,message,param,type') return `a ${response.status} whose error has the fields ${keys} (want code,message,param,type)`;
  if (Object.keys(body as object).length !== 1) return `a ${response.status} with fields beside "error"`;
  return undefined;
}

function contentType(response: RawResponse): string {
  return response.headers['content-type']?.[0] ?? '';
}

/** Status, shape and timing of what came back on the case's connection. */
export function responseProblems(fuzzCase: FuzzCase, result: Exchange): string[] {
  const problems: string[] = [];
  if (result.timedOut) problems.push(`no answer: ${result.responses.length} of ${fuzzCase.expect} responses arrived before the time limit`);
  else if (result.responses.length < fuzzCase.expect) problems.push(`the connection closed after ${result.responses.length} of ${fuzzCase.expect} responses`);
  result.responses.forEach((response, i) => {
    const head = fuzzCase.heads?.[i] === true;
    if (!Number.isInteger(response.status)) problems.push(`an unparseable status line: ${JSON.stringify(response.head.slice(0, 100))}`);
    else if (response.status >= 500 && !(fuzzCase.fault && PROVIDER_FAILURE.has(response.status))) {
      problems.push(`a ${response.status} for ${fuzzCase.fault ? 'a provider failure (502/503/504 expected)' : 'bad input'}: ${response.body.toString('utf8').slice(0, 300)}`);
    } else if (response.status >= 400 && !head) {
      const problem = errorShapeProblem(response);
      if (problem) problems.push(problem);
    } else if (response.status === 200 && !head && contentType(response).startsWith('application/json') && fuzzCase.kind !== 'route' && !fuzzCase.fault) {
      // A chat answer: the fakes only send fixtures, so anything else is the gateway's doing.
      let body: unknown;
      try {
        body = JSON.parse(response.body.toString('utf8'));
      } catch {
        problems.push('a 200 whose JSON body does not parse');
        return;
      }
      // Pipelined cases mix in GET /v1/models, whose list is not a completion.
      if ((body as { object?: unknown } | null)?.object === 'list') return;
      const problem = checkCompletion(body);
      if (problem) problems.push(`a 200 that is not a chat completion: ${problem}`);
    }
  });
  if (fuzzCase.watchClose && result.responses.length > 0 && !result.closedByServer) {
    problems.push('the connection was held open after the gateway refused a body it had not read');
  }
  return problems;
}

/** Every place a secret must never appear: the raw responses (status line, headers, body) and each log line. */
export function secretProblems(secrets: Record<string, string>, result: Exchange, logs: ReadonlyArray<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const texts: Array<[string, string]> = result.responses.map((response, i) => [`response ${i + 1}`, `${response.head}\r\n\r\n${response.body.toString('latin1')}`]);
  if (result.leftover.length > 0) texts.push(['the bytes after the last response', result.leftover.toString('latin1')]);
  logs.forEach((line, i) => texts.push([`log line ${i + 1} (${String(line.msg)})`, JSON.stringify(line)]));
  for (const [name, secret] of Object.entries(secrets)) {
    for (const [where, text] of texts) if (text.includes(secret)) problems.push(`the ${name} appears in ${where}: ${excerpt(text, secret)}`);
  }
  return problems;
}

function excerpt(text: string, secret: string): string {
  const at = text.indexOf(secret);
  return JSON.stringify(text.slice(Math.max(0, at - 120), at + secret.length + 40));
}
