// A form's refusal by the API, naming the field it is about when the API said which (`param`),
// in the form's own words (the caller maps `limits.daily_cost_limit` to its label).
import { ApiError } from '../api.js';

const asIs = (param: string) => param;

/** The API's refusal, naming the form's field when the API said which (`param`). */
export function FormError({ error, label = asIs }: { error: unknown; label?: (param: string) => string }) {
  if (!error) return null;
  const param = error instanceof ApiError ? error.param : null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {param && <strong>{label(param)}: </strong>}
      {message}
    </p>
  );
}
