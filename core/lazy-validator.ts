// A validator compiled on its first use rather than when its module is imported. Compiling a schema
// with ajv takes milliseconds to tens of them; the admin API's bodies (keys, event endpoints,
// experiments) are checked rarely, and every gateway start paid for them all (~0.2 s with ajv's own
// start). The first call compiles (a schema ajv refuses throws then, as compile would have); the
// result keeps ajv's ValidateFunction shape: `errors` is the last call's.
import type { ValidateFunction } from 'ajv';

export function lazyValidator<T>(compile: () => ValidateFunction<T>): ValidateFunction<T> {
  let compiled: ValidateFunction<T> | undefined;
  const get = () => (compiled ??= compile());
  const validate = function (this: unknown, data: unknown, dataCxt?: Parameters<ValidateFunction<T>>[1]): data is T {
    const real = get();
    const valid = real.call(this, data, dataCxt);
    validate.errors = real.errors;
    return valid;
  } as ValidateFunction<T>;
  Object.defineProperties(validate, {
    schema: { get: () => get().schema, enumerable: true },
    schemaEnv: { get: () => get().schemaEnv, enumerable: true },
    evaluated: { get: () => get().evaluated, enumerable: true },
    source: { get: () => get().source, enumerable: true },
  });
  return validate;
}

/** A value made on first use: e.g. the Ajv instance several lazy validators of a module share. */
export function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
