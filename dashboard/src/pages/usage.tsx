import type { PageProps } from '../app.js';

export function Usage(_props: PageProps) {
  return (
    <section>
      <h1>Usage</h1>
    </section>
  );
}
