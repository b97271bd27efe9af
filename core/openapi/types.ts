// The parts of OpenAPI 3.1 that the gateway's description uses, typed so that a misspelt or
// misplaced field fails the build. Schemas are JSON Schema 2020-12 (OpenAPI 3.1's dialect); they
// are typed loosely, as the request validator's schemas are.

export type Schema = { readonly [keyword: string]: unknown };

export interface Reference {
  $ref: string;
}

export interface Header {
  description: string;
  /** Present on every response that lists it; otherwise only in the cases its description names. */
  required?: boolean;
  schema: Schema;
}

export interface MediaType {
  schema: Schema;
  /**
   * For `text/event-stream`: the schema of each event's `data` (OpenAPI 3.1 has no word for the
   * items of a stream; 3.2's `itemSchema` will be one).
   */
  'x-event-data'?: Schema;
}

export interface Response {
  description: string;
  headers?: Record<string, Header | Reference>;
  content?: Record<string, MediaType>;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  description: string;
  required?: boolean;
  schema: Schema;
}

export interface RequestBody {
  description: string;
  required: boolean;
  content: Record<string, MediaType>;
}

/** Each entry is one way to be let in; `{}` means "without credentials". */
export type SecurityRequirement = Record<string, string[]>;

export interface Operation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  /** Absent: the document's default (a gateway key). */
  security?: SecurityRequirement[];
  parameters?: Array<Parameter | Reference>;
  requestBody?: RequestBody;
  /** By status code, or `4XX` for the range. */
  responses: Record<string, Response | Reference>;
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type PathItem = Partial<Record<Method, Operation>>;

export type SecurityScheme =
  | { type: 'http'; scheme: 'bearer'; description: string }
  | { type: 'apiKey'; in: 'cookie' | 'header'; name: string; description: string };

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: Array<{ url: string; description: string }>;
  security: SecurityRequirement[];
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, Schema>;
    headers: Record<string, Header>;
    parameters: Record<string, Parameter>;
    responses: Record<string, Response>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}
