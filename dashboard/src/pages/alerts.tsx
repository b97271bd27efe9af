import type { PageProps } from '../app.js';

export function Alerts(_props: PageProps) {
  return (
    <section>
      <h1>Alerts</h1>
    </section>
  );
}
