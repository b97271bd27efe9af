// The shell: sign-in until a session exists, then the navigation and the page the hash names.
// A non-admin key sees only its own usage (Overview and Usage); the admin pages are not offered.
import { useEffect, useState } from 'preact/hooks';
import { currentSession, signOut, useSession, type Session } from './api.js';
import { useRoute } from './router.js';
import { SignIn } from './pages/sign-in.js';
import { Overview } from './pages/overview.js';
import { Usage } from './pages/usage.js';
import { Providers } from './pages/providers.js';
import { Keys } from './pages/keys.js';
import { Alerts } from './pages/alerts.js';
import { Experiments } from './pages/experiments.js';
import type { ComponentType } from 'preact';

export interface PageProps {
  session: Session;
  query: URLSearchParams;
}

interface Page {
  path: string;
  title: string;
  admin: boolean;
  component: ComponentType<PageProps>;
}

export const PAGES: Page[] = [
  { path: '/', title: 'Overview', admin: false, component: Overview },
  { path: '/usage', title: 'Usage and costs', admin: false, component: Usage },
  { path: '/providers', title: 'Providers', admin: true, component: Providers },
  { path: '/settings/keys', title: 'Settings → API Keys', admin: true, component: Keys },
  { path: '/alerts', title: 'Alerts and webhooks', admin: true, component: Alerts },
  { path: '/experiments', title: 'Experiments', admin: true, component: Experiments },
];

export function App() {
  const route = useRoute();
  // undefined: not known yet (the session is being read); null: signed out.
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [ended, setEnded] = useState('');

  useSession(session ?? null, () => {
    setSession(null);
    setEnded('Your session ended. Sign in again.');
  });

  useEffect(() => {
    currentSession().then(setSession, () => setSession(null));
  }, []);

  if (session === undefined) return <p class="loading" role="status">Loading…</p>;
  if (session === null)
    return (
      <SignIn
        notice={ended}
        onSignedIn={(signed) => {
          setEnded('');
          setSession(signed);
        }}
      />
    );

  return <Shell session={session} route={route} onSignedOut={() => setSession(null)} />;
}

function Shell({ session, route, onSignedOut }: { session: Session; route: ReturnType<typeof useRoute>; onSignedOut: () => void }) {
  const pages = PAGES.filter((page) => session.admin || !page.admin);
  const page = pages.find((candidate) => candidate.path === route.path);
  const Component = page?.component;
  useTitle(page?.title ?? 'Not found');

  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(event) => { event.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">modelgate</span>
        <nav aria-label="Pages">
          <ul>
            {pages.map((candidate) => (
              <li key={candidate.path}>
                <a href={`#${candidate.path}`} aria-current={candidate === page ? 'page' : undefined}>
                  {candidate.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span title={session.key_id}>
            {session.name ?? (session.key_id === 'bootstrap' ? 'Bootstrap key' : session.key_id)}
            {session.admin ? ' (admin)' : ''}
          </span>
          <button
            type="button"
            class="secondary"
            onClick={async () => {
              await signOut().catch(() => undefined);
              onSignedOut();
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {Component ? (
          <Component session={session} query={route.query} />
        ) : (
          <section>
            <h1>Page not found</h1>
            <p>
              There is no page at <code>{route.path}</code>. <a href="#/">Go to the overview</a>.
            </p>
          </section>
        )}
      </main>
    </div>
  );
}

function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · modelgate`;
  }, [title]);
}
