// Checks for an OpenAPI 3.1 document and for real responses against it. `documentProblems` checks
// the document's structure (the parts of OpenAPI 3.1 the gateway uses), that every reference
// resolves, that path templates and parameters agree, and that every schema compiles under JSON
// Schema 2020-12 in ajv's strict mode. `ResponseChecker` finds the response an operation documents
// for a status (else that is a problem) and validates the content type, the body (each event of a
// stream: `data:` lines, and an `event:` name when there is one, which must be the payload's type)
// and the headers. Validation is stricter than the document: an object schema that lists
// its properties and does not say `additionalProperties` admits no others, so a field the
// document does not name fails the test; the document opens an object on purpose where providers'
// fields pass through.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

type Json = any;

const COMPONENTS = 'urn:modelgate:openapi:components';
/** Headers the gateway writes on purpose: each one sent must be documented for that response. */
const OWN_HEADERS = /^(x-request-id|x-modelgate-.*|x-ratelimit-.*|retry-after(-ms)?|x-should-retry|www-authenticate)$/;

// The document's structure, as OpenAPI 3.1 defines it, for the objects the gateway uses.
const extension = { '^x-': {} };
const headerObject = { type: 'object', required: ['schema'], properties: { description: { type: 'string' }, required: { type: 'boolean' }, schema: { type: ['object', 'boolean'] } } };
const refOr = (schema: Json) => ({ oneOf: [{ type: 'object', required: ['$ref'], properties: { $ref: { type: 'string' } }, additionalProperties: false }, schema] });
const mediaType = { type: 'object', properties: { schema: { type: ['object', 'boolean'] } }, patternProperties: extension, additionalProperties: false };
const response = {
  type: 'object',
  required: ['description'],
  properties: {
    description: { type: 'string' },
    headers: { type: 'object', additionalProperties: refOr(headerObject) },
    content: { type: 'object', additionalProperties: mediaType },
  },
  patternProperties: extension,
  additionalProperties: false,
};
const parameter = {
  type: 'object',
  required: ['name', 'in', 'schema'],
  properties: { name: { type: 'string' }, in: { enum: ['path', 'query', 'header', 'cookie'] }, description: { type: 'string' }, required: { type: 'boolean' }, schema: { type: ['object', 'boolean'] } },
  if: { properties: { in: { const: 'path' } } },
  then: { required: ['required'], properties: { required: { const: true } } },
};
/** A components section: names as OpenAPI allows them. */
const named = (entry: Json) => ({ type: 'object', propertyNames: { pattern: '^[a-zA-Z0-9._-]+$' }, additionalProperties: entry });
const security = { type: 'array', items: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } };
const operation = {
  type: 'object',
  required: ['responses'],
  properties: {
    operationId: { type: 'string' },
    summary: { type: 'string' },
    description: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    security,
    parameters: { type: 'array', items: refOr(parameter) },
    requestBody: { type: 'object', required: ['content'], properties: { description: { type: 'string' }, required: { type: 'boolean' }, content: { type: 'object', additionalProperties: mediaType } } },
    responses: { type: 'object', minProperties: 1, propertyNames: { pattern: '^([1-5](\\d\\d|XX)|default)$' }, additionalProperties: refOr(response) },
  },
  patternProperties: extension,
  additionalProperties: false,
};
const STRUCTURE = {
  type: 'object',
  required: ['openapi', 'info'],
  anyOf: [{ required: ['paths'] }, { required: ['components'] }, { required: ['webhooks'] }],
  properties: {
    openapi: { type: 'string', pattern: '^3\\.1\\.\\d+(-.+)?$' },
    info: { type: 'object', required: ['title', 'version'], properties: { title: { type: 'string' }, version: { type: 'string' }, description: { type: 'string' } } },
    jsonSchemaDialect: { type: 'string' },
    servers: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, description: { type: 'string' } } } },
    security,
    tags: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, description: { type: 'string' } } } },
    paths: {
      type: 'object',
      propertyNames: { pattern: '^/' },
      additionalProperties: {
        type: 'object',
        properties: Object.fromEntries(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].map((method) => [method, operation])),
        patternProperties: extension,
        additionalProperties: false,
      },
    },
    components: {
      type: 'object',
      properties: {
        schemas: named({ type: ['object', 'boolean'] }),
        responses: named(refOr(response)),
        parameters: named(refOr(parameter)),
        headers: named(refOr(headerObject)),
        securitySchemes: named({
          type: 'object',
          required: ['type'],
          properties: { type: { enum: ['apiKey', 'http', 'mutualTLS', 'oauth2', 'openIdConnect'] } },
          if: { properties: { type: { const: 'http' } } },
          then: { required: ['scheme'] },
        }),
      },
    },
  },
  patternProperties: extension,
  additionalProperties: false,
};

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, discriminator: true, allowUnionTypes: true });
  ajv.addFormat('date', { validate: (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)) });
  ajv.addFormat('date-time', { validate: (value: string) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)) });
  return ajv;
}

/** A copy in which `#/components/schemas/X` refers to the components added to ajv under COMPONENTS. */
function portable<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${COMPONENTS}#/$defs/`));
}

/** Closes every object schema that lists properties and leaves additionalProperties unsaid. */
function closed(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([name, sub]) => [name, closed(sub)])) : closed(value)]));
  if (out.properties && !('additionalProperties' in out) && !('unevaluatedProperties' in out)) out.additionalProperties = false;
  return out;
}

function pointer(document: Json, ref: string): Json {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((node: Json, part) => (node === undefined ? undefined : node[part]), document);
}

const resolve = (document: Json, node: Json) => (node && typeof node.$ref === 'string' ? pointer(document, node.$ref) : node);

/** Every schema the document holds outside components.schemas, with where it is. */
function schemasOf(document: Json): Array<[string, Json]> {
  const found: Array<[string, Json]> = [];
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const [index, param] of (op.parameters ?? []).entries()) if (param.schema) found.push([`${at} parameter ${index}`, param.schema]);
      for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {})) found.push([`${at} request ${type}`, media.schema]);
      for (const [status, res] of Object.entries<Json>(op.responses ?? {})) {
        for (const [type, media] of Object.entries<Json>(res.content ?? {})) {
          found.push([`${at} ${status} ${type}`, media.schema]);
          if (media['x-event-data']) found.push([`${at} ${status} ${type} events`, media['x-event-data']]);
        }
        for (const [name, header] of Object.entries<Json>(res.headers ?? {})) if (header.schema) found.push([`${at} ${status} header ${name}`, header.schema]);
      }
    }
  }
  for (const section of ['headers', 'parameters'] as const) {
    for (const [name, entry] of Object.entries<Json>(document.components?.[section] ?? {})) if (entry.schema) found.push([`components.${section}.${name}`, entry.schema]);
  }
  for (const [name, res] of Object.entries<Json>(document.components?.responses ?? {})) {
    for (const [type, media] of Object.entries<Json>(res.content ?? {})) found.push([`components.responses.${name} ${type}`, media.schema]);
  }
  return found;
}

/** What is wrong with the document as an OpenAPI 3.1 description; empty when nothing is. */
export function documentProblems(document: Json): string[] {
  const problems: string[] = [];
  const ajv = newAjv();
  // (Its anyOf requires fields its own properties declare: not a strict-mode mistake.)
  const structure = new Ajv2020({ allErrors: true, allowUnionTypes: true, strictRequired: false }).compile(STRUCTURE);
  if (!structure(document)) problems.push(...(structure.errors ?? []).map((e) => `structure: ${e.instancePath} ${e.message}`));

  // Every reference resolves.
  const visit = (node: Json, at: string) => {
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${at}/${i}`));
    if (typeof node !== 'object' || node === null) return;
    if (typeof node.$ref === 'string' && pointer(document, node.$ref) === undefined) problems.push(`${at}: $ref ${node.$ref} does not resolve`);
    for (const [key, value] of Object.entries(node)) visit(value, `${at}/${key}`);
  };
  visit(document, '#');

  // Path templates and path parameters agree; operation ids are unique; security names a scheme.
  const ids = new Set<string>();
  const schemes = new Set(Object.keys(document.components?.securitySchemes ?? {}));
  const checkSecurity = (requirements: Json[] | undefined, at: string) => {
    for (const requirement of requirements ?? []) for (const name of Object.keys(requirement)) if (!schemes.has(name)) problems.push(`${at}: unknown security scheme ${name}`);
  };
  checkSecurity(document.security, 'document');
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    for (const [method, op] of Object.entries<Json>(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      const declared = (op.parameters ?? []).map((p: Json) => resolve(document, p)).filter((p: Json) => p?.in === 'path').map((p: Json) => p.name).sort();
      if (JSON.stringify(declared) !== JSON.stringify(templated)) problems.push(`${at}: path parameters ${declared} do not match the template's ${templated}`);
      if (op.operationId) {
        if (ids.has(op.operationId)) problems.push(`${at}: operationId ${op.operationId} is used twice`);
        ids.add(op.operationId);
      }
      checkSecurity(op.security, at);
    }
  }

  // Every schema compiles (strict: an unknown keyword or a misspelt one is an error).
  const components = portable(document.components?.schemas ?? {});
  try {
    ajv.addSchema({ $id: COMPONENTS, $defs: components });
    for (const name of Object.keys(components)) ajv.getSchema(`${COMPONENTS}#/$defs/${name}`);
  } catch (error) {
    problems.push(`components.schemas: ${(error as Error).message}`);
  }
  for (const [at, schema] of schemasOf(document)) {
    try {
      ajv.compile(portable(schema));
    } catch (error) {
      problems.push(`${at}: ${(error as Error).message}`);
    }
  }
  return problems;
}

export interface RealResponse {
  status: number;
  headers: Headers;
  /** The body as text. */
  text: string;
}

/** Validates real responses against what the document says the operation answers. */
export class ResponseChecker {
  private readonly ajv = newAjv();
  private readonly compiled = new Map<Json, ValidateFunction>();
  /** `METHOD /path status` of every response checked, for the coverage report. */
  readonly seen = new Set<string>();

  constructor(readonly document: Json) {
    this.ajv.addSchema({ $id: COMPONENTS, $defs: closed(portable(document.components.schemas)) });
  }

  private validator(schema: Json): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) this.compiled.set(schema, (validate = this.ajv.compile(closed(portable(schema)))));
    return validate;
  }

  private errors(schema: Json, value: unknown): string | null {
    const validate = this.validator(schema);
    return validate(value) ? null : this.ajv.errorsText(validate.errors);
  }

  /** The documented response for the status: exact, else its range (`4XX`), else `default`. */
  described(method: string, path: string, status: number): { key: string; response: Json } | undefined {
    const operation = this.document.paths?.[path]?.[method.toLowerCase()];
    if (!operation) return undefined;
    for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
      if (operation.responses[key]) return { key, response: resolve(this.document, operation.responses[key]) };
    }
    return undefined;
  }

  /** What does not match the document; empty when the response is as described. */
  problems(method: string, path: string, real: RealResponse): string[] {
    const described = this.described(method, path, real.status);
    if (!described) return [`${method} ${path} does not describe status ${real.status}`];
    this.seen.add(`${method.toUpperCase()} ${path} ${described.key}`);
    const { response } = described;
    const problems: string[] = [];

    const documented = new Map<string, Json>(Object.entries<Json>(response.headers ?? {}).map(([name, header]) => [name.toLowerCase(), resolve(this.document, header)]));
    for (const [name, header] of documented) {
      const value = real.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`header ${name} is documented as always sent but is missing`);
        continue;
      }
      const numeric = ['integer', 'number'].includes(header.schema.type) && /^-?\d+(\.\d+)?$/.test(value);
      const error = this.errors(header.schema, numeric ? Number(value) : value);
      if (error) problems.push(`header ${name}: ${JSON.stringify(value)} ${error}`);
    }
    real.headers.forEach((_value, name) => {
      if (OWN_HEADERS.test(name) && !documented.has(name)) problems.push(`header ${name} is sent but not documented for ${real.status}`);
    });

    const type = (real.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (real.text !== '') problems.push(`a body is sent but none is documented for ${real.status}`);
      return problems;
    }
    const media = content[type];
    if (!media) return [...problems, `content-type ${type || '(none)'} is not documented for ${real.status} (documented: ${Object.keys(content).join(', ')})`];
    if (type === 'text/event-stream') return [...problems, ...this.eventProblems(media, real.text)];
    let body: unknown = real.text;
    if (type === 'application/json') {
      try {
        body = JSON.parse(real.text);
      } catch {
        return [...problems, 'the body is not JSON'];
      }
    }
    const error = this.errors(media.schema, body);
    if (error) problems.push(`body: ${error}`);
    return problems;
  }

  private eventProblems(media: Json, text: string): string[] {
    if (!media['x-event-data']) return ['the stream has no documented event schema'];
    const problems: string[] = [];
    const events = text.split(/\r?\n\r?\n/).filter((event) => event.trim() !== '');
    events.forEach((event, i) => {
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data === '[DONE]') {
        if (i !== events.length - 1) problems.push(`event ${i}: [DONE] before the end`);
        return;
      }
      let payload: unknown;
      try {
        payload = JSON.parse(data);
      } catch {
        problems.push(`event ${i}: data is not JSON`);
        return;
      }
      const error = this.errors(media['x-event-data'], payload);
      if (error) problems.push(`event ${i}: ${error}`);
      // A named event (the Responses API's framing) is named by its payload's type.
      const name = event.split(/\r?\n/).find((line) => line.startsWith('event:'))?.slice(6).trim();
      if (name !== undefined && name !== (payload as { type?: unknown })?.type) problems.push(`event ${i}: named ${name} but its type is ${(payload as { type?: unknown })?.type}`);
    });
    if (events.length === 0) problems.push('the stream has no events');
    return problems;
  }
}
