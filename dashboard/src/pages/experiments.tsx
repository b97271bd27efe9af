import type { PageProps } from '../app.js';

export function Experiments(_props: PageProps) {
  return (
    <section>
      <h1>Experiments</h1>
    </section>
  );
}
