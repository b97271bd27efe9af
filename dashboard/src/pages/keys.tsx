import type { PageProps } from '../app.js';

export function Keys(_props: PageProps) {
  return (
    <section>
      <h1>Keys</h1>
    </section>
  );
}
