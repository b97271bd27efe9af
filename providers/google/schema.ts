// JSON Schema → Gemini's `Schema` (an OpenAPI 3.0 subset with upper-case type names), used for
// function parameters and, on models before Gemini 2.5, for response schemas. A schema the subset
// cannot express (`$ref`, `oneOf`, open `additionalProperties`, mixed type unions, non-string enums,
// objects without properties) converts to undefined, and the caller sends JSON Schema instead.
import { isObject } from '../shared/json-object.js';

/** Keywords the subset has under the same name and meaning. */
const KEPT = new Set([
  'format', 'title', 'description', 'nullable', 'minItems', 'maxItems', 'minimum', 'maximum', 'minLength',
  'maxLength', 'pattern', 'minProperties', 'maxProperties', 'default', 'example', 'propertyOrdering', 'required',
]);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);

/**
 * `ordered` adds `propertyOrdering` (the client's key order) to every object: Gemini otherwise orders
 * generated properties alphabetically, which matters for response schemas, not for parameters.
 */
export function toGeminiSchema(schema: unknown, ordered = false): Record<string, unknown> | undefined {
  if (!isObject(schema)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema') continue; // a dialect marker, not a constraint
    if (key === 'additionalProperties') {
      if (value === false) continue; // Gemini produces declared properties only
      return undefined;
    }
    if (key === 'type') {
      if (!setType(out, value)) return undefined;
    } else if (key === 'enum' || key === 'const') {
      const values = key === 'const' ? [value] : value;
      if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) return undefined;
      out.enum = values;
    } else if (key === 'properties') {
      if (typeof value !== 'object' || value === null) return undefined;
      const properties: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(value)) {
        const converted = toGeminiSchema(property, ordered);
        if (!converted) return undefined;
        properties[name] = converted;
      }
      out.properties = properties;
      if (ordered && !('propertyOrdering' in schema)) out.propertyOrdering = Object.keys(properties);
    } else if (key === 'items') {
      const items = toGeminiSchema(value, ordered);
      if (!items) return undefined;
      out.items = items;
    } else if (key === 'anyOf') {
      if (!Array.isArray(value)) return undefined;
      const options = value.map((option) => toGeminiSchema(option, ordered));
      if (options.some((option) => option === undefined)) return undefined;
      out.anyOf = options;
    } else if (KEPT.has(key)) {
      out[key] = value;
    } else {
      return undefined;
    }
  }
  // Gemini answers an OBJECT without properties with 400 "should be non-empty for OBJECT type".
  if (out.type === 'OBJECT' && Object.keys((out.properties as object | undefined) ?? {}).length === 0) return undefined;
  return out;
}

/** `"string"` → `STRING`; `["string", "null"]` → `STRING` + nullable; anything else is not expressible. */
function setType(out: Record<string, unknown>, value: unknown): boolean {
  const types = Array.isArray(value) ? value : [value];
  const concrete = types.filter((type) => type !== 'null');
  if (concrete.length !== 1 || typeof concrete[0] !== 'string' || !TYPES.has(concrete[0])) return false;
  out.type = concrete[0].toUpperCase();
  if (concrete.length < types.length) out.nullable = true;
  return true;
}
