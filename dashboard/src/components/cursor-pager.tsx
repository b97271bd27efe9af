// Pages of a list the API pages by cursor (`after` = the previous page's `last_id`): the cursors of the
// pages already seen are kept on a stack, so Previous goes back without a `before` parameter.
import { useState } from 'preact/hooks';

export interface Cursor {
  /** The `after` of the page shown; undefined on the first. */
  after: string | undefined;
  page: number;
  next: (lastId: string | null) => void;
  previous: () => void;
  reset: () => void;
}

export function useCursor(): Cursor {
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  return {
    after: stack[stack.length - 1],
    page: stack.length,
    next: (lastId) => lastId && setStack((seen) => [...seen, lastId]),
    previous: () => setStack((seen) => (seen.length > 1 ? seen.slice(0, -1) : seen)),
    reset: () => setStack((seen) => (seen.length === 1 && seen[0] === undefined ? seen : [undefined])),
  };
}

export function Pager({ cursor, hasMore, lastId, label }: { cursor: Cursor; hasMore: boolean; lastId: string | null; label: string }) {
  if (cursor.page === 1 && !hasMore) return null;
  return (
    <nav class="pager actions" aria-label={label}>
      <button type="button" class="secondary" disabled={cursor.page === 1} onClick={cursor.previous}>
        Previous page
      </button>
      <span class="pager-at">Page {cursor.page}</span>
      <button type="button" class="secondary" disabled={!hasMore} onClick={() => cursor.next(lastId)}>
        Next page
      </button>
    </nav>
  );
}
