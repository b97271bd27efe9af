import type { PageProps } from '../app.js';

export function Overview(_props: PageProps) {
  return (
    <section>
      <h1>Overview</h1>
    </section>
  );
}
