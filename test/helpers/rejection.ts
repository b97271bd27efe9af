// What a call throws, or undefined when it returns: lets a test t.match a refusal's fields (status,
// param, reason) and t.notOk a call that must be accepted, with one helper for both.

export function rejection(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}
