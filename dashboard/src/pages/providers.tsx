import type { PageProps } from '../app.js';

export function Providers(_props: PageProps) {
  return (
    <section>
      <h1>Providers</h1>
    </section>
  );
}
