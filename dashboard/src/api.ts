// The dashboard's only way to the gateway: the documented API (docs/api.md), signed in by the session
// cookie that POST /dashboard/session set. Changes carry the session's CSRF token; an answer that is
// not a success becomes an ApiError with the API's own message, and a 401 signs the page out.

export interface Session {
  object: 'dashboard_session';
  key_id: string;
  name: string | null;
  admin: boolean;
  tenant: string;
  csrf_token: string;
  expires_at: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => undefined;

/** Called with the session after sign-in or a reload; and the handler for a session that ended. */
export function useSession(session: Session | null, signedOut: () => void): void {
  csrfToken = session?.csrf_token ?? '';
  onSignedOut = signedOut;
}

type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function send(method: string, path: string, body?: unknown, accept = 'application/json'): Promise<Response> {
  const headers: Record<string, string> = { accept };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'The gateway did not answer. Check that it is running and try again.');
  }
  if (response.ok) return response;
  let message = `${response.status} ${response.statusText}`;
  let code: string | null = null;
  let param: string | null = null;
  try {
    const error = ((await response.json()) as { error?: { message?: string; code?: string | null; param?: string | null } }).error;
    if (error?.message) message = error.message;
    code = error?.code ?? null;
    param = error?.param ?? null;
  } catch {
    // not JSON: the status line says it
  }
  if (response.status === 401 && !path.startsWith('/dashboard/session')) onSignedOut();
  throw new ApiError(response.status, message, code, param);
}

export async function get<T>(path: string, query?: Query): Promise<T> {
  return (await (await send('GET', withQuery(path, query))).json()) as T;
}

/** A CSV answer (the analytics reports' `format=csv`), as text. */
export async function getText(path: string, query?: Query): Promise<string> {
  return (await send('GET', withQuery(path, query), undefined, 'text/csv')).text();
}

export async function post<T>(path: string, body: unknown = {}): Promise<T> {
  return (await (await send('POST', path, body)).json()) as T;
}

export async function patch<T>(path: string, body: unknown): Promise<T> {
  return (await (await send('PATCH', path, body)).json()) as T;
}

export async function del<T>(path: string): Promise<T> {
  return (await (await send('DELETE', path)).json()) as T;
}

export const signIn = (key: string) => post<Session>('/dashboard/session', { key });
export const currentSession = () => get<Session>('/dashboard/session');
export const signOut = () => del<{ deleted: boolean }>('/dashboard/session');
